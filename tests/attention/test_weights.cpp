// Weights: Xavier bounds, determinism, MHA → GQA/MQA mean-pooling, loading PyTorch-layout .npy.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

#include "attnscope/core/error.h"
#include "attnscope/io/npy.h"
#include "attnscope/core/rng.h"
#include "attnscope/attention/weights.h"
#include "check.h"
#include "run_cli.h"

using namespace attnscope;
using attnscope::test::check_close;

TEST_CASE("weights: Xavier/Glorot uniform bounds and nn.Linear shapes") {
  const AttentionShape s{64, 8, 2};
  const AttentionWeights w = random_weights(s, 42);
  CHECK(w.wq.rows() == 64);
  CHECK(w.wq.cols() == 64);
  CHECK(w.wk.rows() == 16);
  CHECK(w.wv.rows() == 16);
  CHECK(w.wo.rows() == 64);
  CHECK(w.wo.cols() == 64);
  CHECK(w.bq.size() == 0);
  const double bound_q = std::sqrt(6.0 / (64 + 64)), bound_k = std::sqrt(6.0 / (64 + 16));
  CHECK(w.wq.cwiseAbs().maxCoeff() <= bound_q);
  CHECK(w.wk.cwiseAbs().maxCoeff() <= bound_k);
  // Uniform on (−b, b): the spread uses most of the range and the mean is near 0.
  CHECK(w.wq.cwiseAbs().maxCoeff() > 0.95 * bound_q);
  CHECK(std::abs(w.wq.mean()) < 0.01);
}

TEST_CASE("weights: the same seed gives the same numbers, another seed others") {
  const AttentionShape s{16, 4, 4};
  const AttentionWeights a = random_weights(s, 7), b = random_weights(s, 7), c = random_weights(s, 8);
  CHECK(a.wq == b.wq);
  CHECK(a.wo == b.wo);
  CHECK(a.wq != c.wq);
  // Pinned values: SplitMix64 + 24-bit floats are defined bit for bit, so every machine agrees.
  Rng rng(0);
  CHECK(rng.next_u64() == 0xE220A8397B1DCDAFull);
  CHECK(Rng(1).uniform01() == doctest::Approx(float(0x910A2DEC89025CC1ull >> 40) / 16777216.0f));
}

TEST_CASE("weights: conversion with G = H is the identity") {
  const AttentionWeights mha = random_weights({32, 4, 4}, 1);
  const AttentionWeights same = convert_mha_to_grouped(mha, 4, 4);
  CHECK(same.wk == mha.wk);
  CHECK(same.wv == mha.wv);
  CHECK(same.wq == mha.wq);
  CHECK(same.wo == mha.wo);
}

TEST_CASE("weights: conversion mean-pools the K/V heads of each group, Q and O unchanged") {
  const int C = 24, H = 6, dk = 4;
  AttentionWeights mha = random_weights({C, H, H}, 3);
  mha.bk = Vec::LinSpaced(H * dk, 0, 23);
  mha.bv = Vec::LinSpaced(H * dk, 100, 123);
  mha.bq = Vec::Zero(H * dk);
  mha.bo = Vec::Zero(C);
  const AttentionWeights gqa = convert_mha_to_grouped(mha, H, 2);  // groups {0,1,2}, {3,4,5}
  REQUIRE(gqa.wk.rows() == 2 * dk);
  for (int g = 0; g < 2; ++g)
    for (int r = 0; r < dk; ++r) {
      const Mat expected = (mha.wk.row((3 * g) * dk + r) + mha.wk.row((3 * g + 1) * dk + r) +
                            mha.wk.row((3 * g + 2) * dk + r)) / 3.0f;
      check_close(Mat(gqa.wk.row(g * dk + r)), expected, 1e-6, "pooled W_K row");
      // bk[h·dk + r] = h·dk + r, so the mean over h ∈ {3g, 3g+1, 3g+2} is (3g+1)·dk + r.
      CHECK(gqa.bk[g * dk + r] == doctest::Approx((3 * g + 1) * dk + r));
      CHECK(gqa.bv[g * dk + r] == doctest::Approx(100 + (3 * g + 1) * dk + r));
    }
  CHECK(gqa.wq == mha.wq);
  CHECK(gqa.wo == mha.wo);
  const AttentionWeights mqa = convert_mha_to_grouped(mha, H, 1);
  CHECK(mqa.wv.rows() == dk);
  Mat mean = Mat::Zero(dk, C);
  for (int h = 0; h < H; ++h) mean += mha.wv.middleRows(h * dk, dk);
  check_close(mqa.wv, Mat(mean / float(H)), 1e-6, "MQA = mean of all V heads");
  CHECK_THROWS_AS(convert_mha_to_grouped(mha, H, 4), InputError);
}

TEST_CASE("weights: load PyTorch-layout .npy files, with clear errors") {
  namespace fs = std::filesystem;
  const fs::path dir = attnscope::test::fresh_dir("weights_load");
  const AttentionShape s{8, 2, 1};
  AttentionWeights w = random_weights(s, 5);
  write_npy(dir / "wq.npy", w.wq);
  write_npy(dir / "wk.npy", w.wk);
  write_npy(dir / "wv.npy", w.wv);
  CHECK_THROWS_WITH_AS(load_weights(dir, s), doctest::Contains("has no wo.npy"), InputError);
  write_npy(dir / "wo.npy", w.wo);
  const AttentionWeights loaded = load_weights(dir, s);
  CHECK(loaded.wq == w.wq);
  CHECK(loaded.wo == w.wo);
  CHECK(loaded.bq.size() == 0);
  // Wrong shape: W_K of an MHA layer where GQA (G = 1) is expected.
  CHECK_THROWS_WITH_AS(load_weights(dir, {8, 2, 2}), doctest::Contains("wk.npy' has shape [4, 8] but [8, 8] is needed"),
                       InputError);
  // Biases: all or none.
  const Vec bq = Vec::Ones(8);
  write_npy(dir / "bq.npy", bq.data(), {8});
  CHECK_THROWS_WITH_AS(load_weights(dir, s), doctest::Contains("1 of the 4 bias files"), InputError);
  const Vec bk = Vec::Ones(4), bo = Vec::Constant(8, 2.0f);
  write_npy(dir / "bk.npy", bk.data(), {4});
  write_npy(dir / "bv.npy", bk.data(), {4});
  write_npy(dir / "bo.npy", bo.data(), {8});
  const AttentionWeights with_bias = load_weights(dir, s);
  CHECK(with_bias.bo[3] == 2.0f);
  CHECK_THROWS_WITH_AS(load_weights(dir / "missing", s), doctest::Contains("does not exist"), InputError);
}
