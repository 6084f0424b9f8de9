// The op contract (model/ops.h): every forward and backward against PyTorch autograd fixtures (1e-4
// of the largest entry), against central finite differences, fast path against the plain-loop
// reference, and the invariants of grouped causal attention.
//
// Sections: fast/reference tables · PyTorch fixtures · finite differences · fast == reference ·
//           invariants and determinism
#include <doctest/doctest.h>

#include <functional>
#include <vector>

#include "attnscope/model/ops.h"
#include "model/fixtures.h"

using namespace attnscope;
using attnscope::test::check_identical;
using attnscope::test::check_rel;
using attnscope::test::Fixture;
using attnscope::test::random_floats;
using V = std::vector<float>;

namespace {

// Both implementations behind one table, so every check runs on the fast path and the reference.
struct Impl {
  const char* name;
  decltype(&ops::embedding_forward) embedding_forward;
  decltype(&ops::embedding_backward) embedding_backward;
  decltype(&ops::rmsnorm_forward) rmsnorm_forward;
  decltype(&ops::rmsnorm_backward) rmsnorm_backward;
  decltype(&ops::layernorm_forward) layernorm_forward;
  decltype(&ops::layernorm_backward) layernorm_backward;
  decltype(&ops::linear_forward) linear_forward;
  decltype(&ops::linear_backward) linear_backward;
  decltype(&ops::rope_forward) rope_forward;
  decltype(&ops::rope_backward) rope_backward;
  decltype(&ops::attention_forward) attention_forward;
  decltype(&ops::attention_backward) attention_backward;
  decltype(&ops::swiglu_forward) swiglu_forward;
  decltype(&ops::swiglu_backward) swiglu_backward;
  decltype(&ops::gelu_new_forward) gelu_new_forward;
  decltype(&ops::gelu_new_backward) gelu_new_backward;
  decltype(&ops::residual_forward) residual_forward;
  decltype(&ops::residual_backward) residual_backward;
  decltype(&ops::crossentropy_forward) crossentropy_forward;
  decltype(&ops::crossentropy_backward) crossentropy_backward;
};

#define ATTNSCOPE_OPS_TABLE(ns)                                                                             \
  ns::embedding_forward, ns::embedding_backward, ns::rmsnorm_forward, ns::rmsnorm_backward,               \
      ns::layernorm_forward, ns::layernorm_backward, ns::linear_forward, ns::linear_backward,             \
      ns::rope_forward, ns::rope_backward, ns::attention_forward, ns::attention_backward,                 \
      ns::swiglu_forward, ns::swiglu_backward, ns::gelu_new_forward, ns::gelu_new_backward,               \
      ns::residual_forward, ns::residual_backward, ns::crossentropy_forward, ns::crossentropy_backward

const Impl fast{"fast", ATTNSCOPE_OPS_TABLE(ops)};
const Impl reference{"reference", ATTNSCOPE_OPS_TABLE(ops::reference)};
const Impl* const impls[] = {&fast, &reference};

constexpr double torch_tol = 1e-4;  // relative to the largest entry (issue 14)

// Σ_i w_i·y_i in double: a scalar loss whose gradient with respect to y is w.
double weighted_sum(const V& y, const V& w) {
  double s = 0;
  for (size_t i = 0; i < y.size(); ++i) s += double(y[i]) * w[i];
  return s;
}

// Central differences of loss() with respect to every entry of x, against `analytic`.
void check_finite_differences(V& x, const V& analytic, const std::function<double()>& loss, float h, double rel,
                              const std::string& what) {
  V numeric(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const float old = x[i];
    x[i] = old + h;
    const double plus = loss();
    x[i] = old - h;
    const double minus = loss();
    x[i] = old;
    numeric[i] = float((plus - minus) / (2.0 * double(h)));
  }
  check_rel(analytic, numeric, rel, what + " vs finite differences");
}

}  // namespace

// ================================ PyTorch fixtures ===============================================

TEST_CASE("ops: embedding matches PyTorch autograd") {
  const Fixture f("embedding");
  const int BT = f.size("BT"), C = f.size("C"), Vn = f.size("V");
  const auto ids = f.ids("ids");
  for (const Impl* impl : impls) {
    INFO(impl->name);
    V out(size_t(BT) * C), dtable(size_t(Vn) * C, 0.0f);
    impl->embedding_forward(out.data(), ids.data(), f.tensor("table").data(), BT, C);
    impl->embedding_backward(dtable.data(), f.tensor("dout").data(), ids.data(), BT, C);
    check_rel(out, f.tensor("out"), torch_tol, "out");
    check_rel(dtable, f.tensor("dtable"), torch_tol, "dtable");
  }
}

TEST_CASE("ops: rmsnorm matches PyTorch autograd") {
  const Fixture f("rmsnorm");
  const int BT = f.size("BT"), C = f.size("C");
  const float eps = float(f.number("eps"));
  for (const Impl* impl : impls) {
    INFO(impl->name);
    V out(size_t(BT) * C), rstd(BT), dx(size_t(BT) * C, 0.0f), dw(C, 0.0f);
    const V x = f.tensor("x"), w = f.tensor("weight");
    impl->rmsnorm_forward(out.data(), rstd.data(), x.data(), w.data(), BT, C, eps);
    impl->rmsnorm_backward(dx.data(), dw.data(), f.tensor("dout").data(), x.data(), w.data(), rstd.data(), BT, C);
    check_rel(out, f.tensor("out"), torch_tol, "out");
    check_rel(rstd, f.tensor("rstd"), torch_tol, "rstd");
    check_rel(dx, f.tensor("dx"), torch_tol, "dx");
    check_rel(dw, f.tensor("dweight"), torch_tol, "dweight");
  }
}

TEST_CASE("ops: layernorm matches PyTorch autograd") {
  const Fixture f("layernorm");
  const int BT = f.size("BT"), C = f.size("C");
  const float eps = float(f.number("eps"));
  for (const Impl* impl : impls) {
    INFO(impl->name);
    V out(size_t(BT) * C), mean(BT), rstd(BT), dx(size_t(BT) * C, 0.0f), dw(C, 0.0f), db(C, 0.0f);
    const V x = f.tensor("x"), w = f.tensor("weight"), b = f.tensor("bias");
    impl->layernorm_forward(out.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), BT, C, eps);
    impl->layernorm_backward(dx.data(), dw.data(), db.data(), f.tensor("dout").data(), x.data(), w.data(),
                             mean.data(), rstd.data(), BT, C);
    check_rel(out, f.tensor("out"), torch_tol, "out");
    check_rel(dx, f.tensor("dx"), torch_tol, "dx");
    check_rel(dw, f.tensor("dweight"), torch_tol, "dweight");
    check_rel(db, f.tensor("dbias"), torch_tol, "dbias");
  }
}

TEST_CASE("ops: linear matches PyTorch autograd") {
  const Fixture f("linear");
  const int BT = f.size("BT"), IC = f.size("IC"), OC = f.size("OC");
  for (const Impl* impl : impls) {
    INFO(impl->name);
    V out(size_t(BT) * OC), dx(size_t(BT) * IC, 0.0f), dw(size_t(OC) * IC, 0.0f), db(OC, 0.0f);
    const V x = f.tensor("x"), w = f.tensor("weight");
    impl->linear_forward(out.data(), x.data(), w.data(), f.tensor("bias").data(), BT, IC, OC);
    impl->linear_backward(dx.data(), dw.data(), db.data(), f.tensor("dout").data(), x.data(), w.data(), BT, IC, OC);
    check_rel(out, f.tensor("out"), torch_tol, "out");
    check_rel(dx, f.tensor("dx"), torch_tol, "dx");
    check_rel(dw, f.tensor("dweight"), torch_tol, "dweight");
    check_rel(db, f.tensor("dbias"), torch_tol, "dbias");
  }
}

TEST_CASE("ops: rotary positions match PyTorch autograd (Hugging Face rotate-half, pos0 > 0)") {
  const Fixture f("rope");
  const int B = f.size("B"), T = f.size("T"), NH = f.size("NH"), D = f.size("D"), pos0 = f.size("pos0");
  const float theta = float(f.number("theta"));
  for (const Impl* impl : impls) {
    INFO(impl->name);
    V x = f.tensor("x"), dx = f.tensor("dout");
    impl->rope_forward(x.data(), B, T, NH, D, theta, pos0);
    impl->rope_backward(dx.data(), B, T, NH, D, theta, pos0);
    check_rel(x, f.tensor("out"), torch_tol, "out");
    check_rel(dx, f.tensor("dx"), torch_tol, "dx");
  }
}

TEST_CASE("ops: grouped causal attention matches PyTorch autograd (MHA, GQA, MQA)") {
  for (const char* name : {"attention_g4", "attention_g2", "attention_g1"}) {
    const Fixture f(name);
    const int B = f.size("B"), T = f.size("T"), H = f.size("H"), G = f.size("G"), D = f.size("D");
    const V q = f.tensor("q"), k = f.tensor("k"), v = f.tensor("v");
    for (const Impl* impl : impls) {
      INFO(name << " " << impl->name);
      V out(size_t(B) * T * H * D), probs(size_t(B) * H * T * T);
      V dq(q.size(), 0.0f), dk(k.size(), 0.0f), dv(v.size(), 0.0f);
      impl->attention_forward(out.data(), probs.data(), q.data(), k.data(), v.data(), B, T, H, G, D);
      impl->attention_backward(dq.data(), dk.data(), dv.data(), f.tensor("dout").data(), probs.data(), q.data(),
                               k.data(), v.data(), B, T, H, G, D);
      check_rel(out, f.tensor("out"), torch_tol, "out");
      check_rel(probs, f.tensor("probs"), torch_tol, "probs");
      check_rel(dq, f.tensor("dq"), torch_tol, "dq");
      check_rel(dk, f.tensor("dk"), torch_tol, "dk");
      check_rel(dv, f.tensor("dv"), torch_tol, "dv");
    }
  }
}

TEST_CASE("ops: swiglu and gelu_new match PyTorch autograd") {
  const Fixture s("swiglu");
  const int BT = s.size("BT"), F = s.size("F");
  const Fixture g("gelu_new");
  const int N = g.size("N");
  for (const Impl* impl : impls) {
    INFO(impl->name);
    const V gate = s.tensor("gate"), up = s.tensor("up");
    V out(gate.size()), dgate(gate.size(), 0.0f), dup(up.size(), 0.0f);
    impl->swiglu_forward(out.data(), gate.data(), up.data(), BT, F);
    impl->swiglu_backward(dgate.data(), dup.data(), s.tensor("dout").data(), gate.data(), up.data(), BT, F);
    check_rel(out, s.tensor("out"), torch_tol, "swiglu out");
    check_rel(dgate, s.tensor("dgate"), torch_tol, "swiglu dgate");
    check_rel(dup, s.tensor("dup"), torch_tol, "swiglu dup");

    const V x = g.tensor("x");
    V gout(N), dx(N, 0.0f);
    impl->gelu_new_forward(gout.data(), x.data(), N);
    impl->gelu_new_backward(dx.data(), g.tensor("dout").data(), x.data(), N);
    check_rel(gout, g.tensor("out"), torch_tol, "gelu_new out");
    check_rel(dx, g.tensor("dx"), torch_tol, "gelu_new dx");
  }
}

TEST_CASE("ops: residual matches PyTorch autograd") {
  const Fixture f("residual");
  const int N = f.size("N");
  for (const Impl* impl : impls) {
    INFO(impl->name);
    V out(N), da(N, 0.0f), db(N, 0.0f);
    impl->residual_forward(out.data(), f.tensor("a").data(), f.tensor("b").data(), N);
    impl->residual_backward(da.data(), db.data(), f.tensor("dout").data(), N);
    check_rel(out, f.tensor("out"), torch_tol, "out");
    check_rel(da, f.tensor("da"), torch_tol, "da");
    check_rel(db, f.tensor("db"), torch_tol, "db");
  }
}

TEST_CASE("ops: cross-entropy matches PyTorch autograd (unscored rows left out of the mean)") {
  const Fixture f("crossentropy");
  const int BT = f.size("BT"), Vn = f.size("V");
  const auto targets = f.ids("targets");
  for (const Impl* impl : impls) {
    INFO(impl->name);
    V probs(size_t(BT) * Vn), dlogits(size_t(BT) * Vn, 0.0f);
    const float loss = impl->crossentropy_forward(probs.data(), f.tensor("logits").data(), targets.data(), BT, Vn);
    impl->crossentropy_backward(dlogits.data(), probs.data(), targets.data(), BT, Vn);
    check_rel({loss}, f.tensor("loss"), torch_tol, "loss");
    check_rel(probs, f.tensor("probs"), torch_tol, "probs");
    check_rel(dlogits, f.tensor("dlogits"), torch_tol, "dlogits");
  }
}

// ================================ finite differences =============================================
// Loss = Σ w ⊙ forward(inputs) with random w; the backward's gradient against central differences
// of the float32 forward (h = 1e-2: truncation ~h², rounding ~1e-7/h; tolerance 2e-3).

TEST_CASE("ops: rmsnorm, linear and swiglu backward match finite differences") {
  const int BT = 3, C = 8, OC = 5;
  const float eps = 1e-5f, h = 1e-2f, rel = 2e-3;
  {
    V x = random_floats(BT * C, 1, 1.5f), w = random_floats(C, 2, 0.5f, 1.0f), dy = random_floats(BT * C, 3);
    V y(BT * C), rstd(BT), dx(BT * C, 0.0f), dw(C, 0.0f);
    ops::rmsnorm_forward(y.data(), rstd.data(), x.data(), w.data(), BT, C, eps);
    ops::rmsnorm_backward(dx.data(), dw.data(), dy.data(), x.data(), w.data(), rstd.data(), BT, C);
    auto loss = [&] {
      ops::rmsnorm_forward(y.data(), nullptr, x.data(), w.data(), BT, C, eps);
      return weighted_sum(y, dy);
    };
    check_finite_differences(x, dx, loss, h, rel, "rmsnorm dx");
    check_finite_differences(w, dw, loss, h, rel, "rmsnorm dweight");
  }
  {
    V x = random_floats(BT * C, 4), w = random_floats(OC * C, 5), b = random_floats(OC, 6),
      dy = random_floats(BT * OC, 7);
    V y(BT * OC), dx(BT * C, 0.0f), dw(OC * C, 0.0f), db(OC, 0.0f);
    ops::linear_backward(dx.data(), dw.data(), db.data(), dy.data(), x.data(), w.data(), BT, C, OC);
    auto loss = [&] {
      ops::linear_forward(y.data(), x.data(), w.data(), b.data(), BT, C, OC);
      return weighted_sum(y, dy);
    };
    check_finite_differences(x, dx, loss, h, rel, "linear dx");
    check_finite_differences(w, dw, loss, h, rel, "linear dweight");
    check_finite_differences(b, db, loss, h, rel, "linear dbias");
  }
  {
    V g = random_floats(BT * C, 8, 3.0f), u = random_floats(BT * C, 9), dy = random_floats(BT * C, 10);
    V y(BT * C), dg(BT * C, 0.0f), du(BT * C, 0.0f);
    ops::swiglu_backward(dg.data(), du.data(), dy.data(), g.data(), u.data(), BT, C);
    auto loss = [&] {
      ops::swiglu_forward(y.data(), g.data(), u.data(), BT, C);
      return weighted_sum(y, dy);
    };
    check_finite_differences(g, dg, loss, h, rel, "swiglu dgate");
    check_finite_differences(u, du, loss, h, rel, "swiglu dup");
  }
}

TEST_CASE("ops: rotary, attention and cross-entropy backward match finite differences") {
  const float h = 1e-2f, rel = 2e-3;
  {
    const int B = 2, T = 3, NH = 2, D = 6;
    V x = random_floats(B * T * NH * D, 11), dy = random_floats(x.size(), 12);
    V dx = dy;
    ops::rope_backward(dx.data(), B, T, NH, D, 10000.0f, 5);
    auto loss = [&] {
      V y = x;
      ops::rope_forward(y.data(), B, T, NH, D, 10000.0f, 5);
      return weighted_sum(y, dy);
    };
    check_finite_differences(x, dx, loss, h, rel, "rope dx");
  }
  for (int G : {3, 1}) {
    const int B = 2, T = 4, H = 3, D = 4;
    V q = random_floats(B * T * H * D, 13), k = random_floats(B * T * G * D, 14), v = random_floats(B * T * G * D, 15);
    const V dy = random_floats(q.size(), 16);
    V out(q.size()), probs(size_t(B) * H * T * T), dq(q.size(), 0.0f), dk(k.size(), 0.0f), dv(v.size(), 0.0f);
    ops::attention_forward(out.data(), probs.data(), q.data(), k.data(), v.data(), B, T, H, G, D);
    ops::attention_backward(dq.data(), dk.data(), dv.data(), dy.data(), probs.data(), q.data(), k.data(), v.data(),
                            B, T, H, G, D);
    auto loss = [&] {
      ops::attention_forward(out.data(), probs.data(), q.data(), k.data(), v.data(), B, T, H, G, D);
      return weighted_sum(out, dy);
    };
    INFO("G = " << G);
    check_finite_differences(q, dq, loss, h, rel, "attention dq");
    check_finite_differences(k, dk, loss, h, rel, "attention dk");
    check_finite_differences(v, dv, loss, h, rel, "attention dv");
  }
  {
    const int BT = 4, Vn = 6;
    V logits = random_floats(BT * Vn, 17, 2.0f), probs(BT * Vn), dlogits(BT * Vn, 0.0f);
    const std::vector<int32_t> targets = {2, -1, 5, 0};
    ops::crossentropy_forward(probs.data(), logits.data(), targets.data(), BT, Vn);
    ops::crossentropy_backward(dlogits.data(), probs.data(), targets.data(), BT, Vn);
    auto loss = [&] { return double(ops::crossentropy_forward(probs.data(), logits.data(), targets.data(), BT, Vn)); };
    check_finite_differences(logits, dlogits, loss, 1e-2f, 5e-3, "crossentropy dlogits");
  }
}

// ================================ fast == reference ==============================================
// Shapes large enough that the fast path takes its threaded branches (B·H heads in parallel,
// threaded GEMMs, parallel row loops).

TEST_CASE("ops: the fast path equals the plain-loop reference on shapes that run threaded") {
  const double tol = 2e-5;  // float32 products summed in another order
  {
    const int B = 4, T = 64, H = 8, G = 2, D = 16;
    const V q = random_floats(B * T * H * D, 21), k = random_floats(B * T * G * D, 22),
            v = random_floats(B * T * G * D, 23), dy = random_floats(q.size(), 24);
    V out[2], probs[2], dq[2], dk[2], dv[2];
    for (int i = 0; i < 2; ++i) {
      const Impl& impl = *impls[i];
      out[i].resize(q.size()), probs[i].resize(size_t(B) * H * T * T);
      dq[i].assign(q.size(), 0.5f), dk[i].assign(k.size(), 0.5f), dv[i].assign(v.size(), 0.5f);  // accumulate
      impl.attention_forward(out[i].data(), probs[i].data(), q.data(), k.data(), v.data(), B, T, H, G, D);
      impl.attention_backward(dq[i].data(), dk[i].data(), dv[i].data(), dy.data(), probs[i].data(), q.data(),
                              k.data(), v.data(), B, T, H, G, D);
    }
    check_rel(out[0], out[1], tol, "attention out");
    check_rel(probs[0], probs[1], tol, "attention probs");
    check_rel(dq[0], dq[1], tol, "attention dq");
    check_rel(dk[0], dk[1], tol, "attention dk");
    check_rel(dv[0], dv[1], tol, "attention dv");
  }
  {
    const int BT = 512, IC = 96, OC = 160;
    const V x = random_floats(BT * IC, 31), w = random_floats(OC * IC, 32), b = random_floats(OC, 33),
            dy = random_floats(BT * OC, 34);
    V out[2], dx[2], dw[2], db[2];
    for (int i = 0; i < 2; ++i) {
      out[i].resize(BT * OC), dx[i].assign(BT * IC, 1.0f), dw[i].assign(OC * IC, 1.0f), db[i].assign(OC, 1.0f);
      impls[i]->linear_forward(out[i].data(), x.data(), w.data(), b.data(), BT, IC, OC);
      impls[i]->linear_backward(dx[i].data(), dw[i].data(), db[i].data(), dy.data(), x.data(), w.data(), BT, IC, OC);
    }
    check_rel(out[0], out[1], tol, "linear out");
    check_rel(dx[0], dx[1], tol, "linear dx");
    check_rel(dw[0], dw[1], tol, "linear dweight");
    check_rel(db[0], db[1], tol, "linear dbias");
  }
  {
    const int BT = 2048, C = 96, Vn = 300;
    const V x = random_floats(BT * C, 41, 2.0f), w = random_floats(C, 42, 0.3f, 1.0f), dy = random_floats(BT * C, 43);
    const V logits = random_floats(BT * Vn, 44, 4.0f);
    std::vector<int32_t> targets(BT);
    for (int i = 0; i < BT; ++i) targets[i] = i % 7 == 3 ? -1 : (i * 31) % Vn;
    V y[2], rstd[2], dx[2], dw[2], probs[2], dlogits[2], sw[2], dg[2], du[2], rope[2];
    float loss[2];
    for (int i = 0; i < 2; ++i) {
      const Impl& impl = *impls[i];
      y[i].resize(BT * C), rstd[i].resize(BT), dx[i].assign(BT * C, 0.0f), dw[i].assign(C, 0.0f);
      impl.rmsnorm_forward(y[i].data(), rstd[i].data(), x.data(), w.data(), BT, C, 1e-6f);
      impl.rmsnorm_backward(dx[i].data(), dw[i].data(), dy.data(), x.data(), w.data(), rstd[i].data(), BT, C);
      probs[i].resize(BT * Vn), dlogits[i].assign(BT * Vn, 0.0f);
      loss[i] = impl.crossentropy_forward(probs[i].data(), logits.data(), targets.data(), BT, Vn);
      impl.crossentropy_backward(dlogits[i].data(), probs[i].data(), targets.data(), BT, Vn);
      sw[i].resize(BT * C), dg[i].assign(BT * C, 0.0f), du[i].assign(BT * C, 0.0f);
      impl.swiglu_forward(sw[i].data(), x.data(), dy.data(), BT, C);
      impl.swiglu_backward(dg[i].data(), du[i].data(), logits.data() /* dout: any [BT, F] values */, x.data(),
                           dy.data(), BT, C);
      rope[i] = x;
      impl.rope_forward(rope[i].data(), 4, BT / 4, 6, C / 6, 500000.0f, 0);
    }
    check_rel(y[0], y[1], tol, "rmsnorm out");
    check_rel(rstd[0], rstd[1], tol, "rmsnorm rstd");
    check_rel(dx[0], dx[1], tol, "rmsnorm dx");
    check_rel(dw[0], dw[1], tol, "rmsnorm dweight");
    check_rel({loss[0]}, {loss[1]}, tol, "crossentropy loss");
    check_rel(probs[0], probs[1], tol, "crossentropy probs");
    check_rel(dlogits[0], dlogits[1], tol, "crossentropy dlogits");
    check_rel(sw[0], sw[1], tol, "swiglu out");
    check_rel(dg[0], dg[1], tol, "swiglu dgate");
    check_rel(du[0], du[1], tol, "swiglu dup");
    check_rel(rope[0], rope[1], tol, "rope (T = 512, positions up to 511)");
  }
}

// ================================ invariants and determinism =====================================

TEST_CASE("ops: causal attention rows sum to 1 and the upper triangle is exactly 0") {
  const int B = 2, T = 9, H = 4, G = 2, D = 8;
  const V q = random_floats(B * T * H * D, 51, 30.0f), k = random_floats(B * T * G * D, 52, 30.0f),
          v = random_floats(B * T * G * D, 53);
  V out(q.size()), probs(size_t(B) * H * T * T);
  ops::attention_forward(out.data(), probs.data(), q.data(), k.data(), v.data(), B, T, H, G, D);
  double worst_sum = 0;
  int nonzero_above = 0, non_finite = 0;
  for (int bh = 0; bh < B * H; ++bh)
    for (int i = 0; i < T; ++i) {
      double sum = 0;
      for (int j = 0; j < T; ++j) {
        const float p = probs[(size_t(bh) * T + i) * T + j];
        non_finite += !std::isfinite(p);
        sum += p;
        nonzero_above += j > i && p != 0.0f;
      }
      worst_sum = std::max(worst_sum, std::abs(sum - 1.0));
    }
  CHECK(non_finite == 0);
  CHECK(nonzero_above == 0);
  CHECK(worst_sum < 1e-5);
}

TEST_CASE("ops: grouped attention equals MHA whose heads repeat their group's K and V (forward and backward)") {
  const int B = 2, T = 6, H = 6, G = 2, D = 4, per = H / G;
  const V q = random_floats(B * T * H * D, 61), k = random_floats(B * T * G * D, 62), v = random_floats(B * T * G * D, 63),
          dy = random_floats(q.size(), 64);
  // repeat_kv: kv head g copied to heads g·per … g·per + per − 1
  V k_rep(q.size()), v_rep(q.size());
  for (int bt = 0; bt < B * T; ++bt)
    for (int h = 0; h < H; ++h)
      for (int d = 0; d < D; ++d) {
        k_rep[(size_t(bt) * H + h) * D + d] = k[(size_t(bt) * G + h / per) * D + d];
        v_rep[(size_t(bt) * H + h) * D + d] = v[(size_t(bt) * G + h / per) * D + d];
      }
  V out_g(q.size()), out_m(q.size()), p_g(size_t(B) * H * T * T), p_m(p_g.size());
  ops::attention_forward(out_g.data(), p_g.data(), q.data(), k.data(), v.data(), B, T, H, G, D);
  ops::attention_forward(out_m.data(), p_m.data(), q.data(), k_rep.data(), v_rep.data(), B, T, H, H, D);
  check_rel(out_g, out_m, 1e-6, "out");
  check_rel(p_g, p_m, 1e-6, "probs");
  V dq_g(q.size(), 0.0f), dk_g(k.size(), 0.0f), dv_g(v.size(), 0.0f);
  V dq_m(q.size(), 0.0f), dk_m(q.size(), 0.0f), dv_m(q.size(), 0.0f);
  ops::attention_backward(dq_g.data(), dk_g.data(), dv_g.data(), dy.data(), p_g.data(), q.data(), k.data(), v.data(),
                          B, T, H, G, D);
  ops::attention_backward(dq_m.data(), dk_m.data(), dv_m.data(), dy.data(), p_m.data(), q.data(), k_rep.data(),
                          v_rep.data(), B, T, H, H, D);
  // the gradient of a shared kv head is the sum over the heads that read it
  V dk_sum(k.size(), 0.0f), dv_sum(v.size(), 0.0f);
  for (int bt = 0; bt < B * T; ++bt)
    for (int h = 0; h < H; ++h)
      for (int d = 0; d < D; ++d) {
        dk_sum[(size_t(bt) * G + h / per) * D + d] += dk_m[(size_t(bt) * H + h) * D + d];
        dv_sum[(size_t(bt) * G + h / per) * D + d] += dv_m[(size_t(bt) * H + h) * D + d];
      }
  check_rel(dq_g, dq_m, 1e-6, "dq");
  check_rel(dk_g, dk_sum, 1e-5, "dk");
  check_rel(dv_g, dv_sum, 1e-5, "dv");
}

TEST_CASE("ops: softmax and cross-entropy stay finite for huge logits") {
  const int BT = 3, Vn = 4;
  const V logits = {1e30f, -1e30f, 0.0f, 5.0f, 80.0f, 90.0f, -200.0f, 100.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  const std::vector<int32_t> targets = {1, 2, 3};  // row 0 and 1 target a probability that underflows to 0
  for (const Impl* impl : impls) {
    INFO(impl->name);
    V probs(BT * Vn), d(BT * Vn, 0.0f);
    const float loss = impl->crossentropy_forward(probs.data(), logits.data(), targets.data(), BT, Vn);
    impl->crossentropy_backward(d.data(), probs.data(), targets.data(), BT, Vn);
    CHECK(std::isfinite(loss));
    // row 0: −log p = 2e30; row 1: 300; row 2: log 4
    CHECK(loss == doctest::Approx((2e30 + 300.0 + std::log(4.0)) / 3).epsilon(1e-5));
    for (float x : d) CHECK(std::isfinite(x));
  }
}

TEST_CASE("ops: backward passes give the same bits on every run") {
  const int B = 4, T = 48, H = 8, G = 4, D = 16;
  const V q = random_floats(B * T * H * D, 71), k = random_floats(B * T * G * D, 72), v = random_floats(B * T * G * D, 73),
          dy = random_floats(q.size(), 74);
  V first[3];
  for (int run = 0; run < 3; ++run) {
    V out(q.size()), probs(size_t(B) * H * T * T), dq(q.size(), 0.0f), dk(k.size(), 0.0f), dv(v.size(), 0.0f);
    ops::attention_forward(out.data(), probs.data(), q.data(), k.data(), v.data(), B, T, H, G, D);
    ops::attention_backward(dq.data(), dk.data(), dv.data(), dy.data(), probs.data(), q.data(), k.data(), v.data(),
                            B, T, H, G, D);
    if (run == 0) {
      first[0] = dq, first[1] = dk, first[2] = dv;
    } else {
      check_identical(dq, first[0], "dq");
      check_identical(dk, first[1], "dk");
      check_identical(dv, first[2], "dv");
    }
  }
}

TEST_CASE("ops: attention with a window, a soft-cap and its own scale follows the formulas, fast = reference") {
  // T = 3, one head, D = 1: scores q_i·k_j·scale are written out by hand.
  const V q{1.0f, 2.0f, -1.5f}, k{0.5f, -1.0f, 2.0f}, v{1.0f, 10.0f, 100.0f};
  ops::AttentionOptions o;
  o.scale = 0.7f;
  o.softcap = 1.2f;
  o.window = 2;  // query 2 sees keys 1 and 2, not key 0
  for (auto* f : {&ops::attention_forward_with, &ops::reference::attention_forward_with}) {
    V out(3), probs(9);
    f(out.data(), probs.data(), q.data(), k.data(), v.data(), 1, 3, 1, 1, 1, o);
    auto s = [&](int i, int j) { return std::tanh(double(q[size_t(i)]) * k[size_t(j)] * 0.7f / 1.2) * 1.2; };
    const double e1 = std::exp(s(2, 1)), e2 = std::exp(s(2, 2));
    CHECK(probs[6] == 0.0f);
    CHECK(probs[7] == doctest::Approx(e1 / (e1 + e2)).epsilon(1e-6));
    CHECK(probs[8] == doctest::Approx(e2 / (e1 + e2)).epsilon(1e-6));
    const double a0 = std::exp(s(1, 0)), a1 = std::exp(s(1, 1));
    CHECK(probs[3] == doctest::Approx(a0 / (a0 + a1)).epsilon(1e-6));
    CHECK(out[2] == doctest::Approx((e1 * 10 + e2 * 100) / (e1 + e2)).epsilon(1e-5));
    CHECK(probs[0] == 1.0f);
    CHECK(probs[1] == 0.0f);
  }
  // Larger, grouped, threaded shapes: the fast path equals the plain loops; no options = the plain op.
  const int B = 2, T = 37, H = 4, G = 2, D = 16;
  const V Q = random_floats(size_t(B) * T * H * D, 11), K = random_floats(size_t(B) * T * G * D, 12),
          Vv = random_floats(size_t(B) * T * G * D, 13);
  V out_a(Q.size()), out_b(Q.size()), p_a(size_t(B) * H * T * T), p_b(p_a.size());
  for (const int window : {0, 1, 5, 36, 37, 100}) {
    CAPTURE(window);
    ops::AttentionOptions w{0.3f, 2.5f, window};
    ops::attention_forward_with(out_a.data(), p_a.data(), Q.data(), K.data(), Vv.data(), B, T, H, G, D, w);
    ops::reference::attention_forward_with(out_b.data(), p_b.data(), Q.data(), K.data(), Vv.data(), B, T, H, G, D, w);
    check_rel(p_a, p_b, 1e-6, "probs");
    check_rel(out_a, out_b, 1e-5, "out");
    for (int i = 0; i < T; ++i)
      for (int j = 0; j < T; ++j)
        if (j > i || (window > 0 && j <= i - window)) REQUIRE(p_a[size_t(i) * T + j] == 0.0f);
  }
  ops::attention_forward_with(out_a.data(), p_a.data(), Q.data(), K.data(), Vv.data(), B, T, H, G, D, {});
  ops::attention_forward(out_b.data(), p_b.data(), Q.data(), K.data(), Vv.data(), B, T, H, G, D);
  check_identical(p_a, p_b, "no options = plain attention");
  check_identical(out_a, out_b, "no options = plain attention");
}
