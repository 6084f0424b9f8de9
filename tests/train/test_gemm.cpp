// test_gemm.cpp — training's matrix product (engine/src/train/gemm.h) against ops.h's double-accumulating
// reference. The desktop suite runs it on the AVX-512 kernel (or Eigen); the browser stage builds it into
// engine_tests_wasm (tests/web/engine) and runs it on the SIMD128 kernel.
#include <doctest/doctest.h>

#include <vector>

#include "attnscope/model/ops.h"
#include "model/fixtures.h"
#include "train/gemm.h"

using namespace attnscope;
using attnscope::test::check_rel;
using attnscope::test::random_floats;
using V = std::vector<float>;

TEST_CASE("train gemm: the linear layer's forward and backward equal ops.h's double-accumulating reference") {
  // Shapes off every block edge of gemm.h (12-row and 32-column panels, 192-row A blocks, 256-deep
  // K blocks) and training's own (512 rows, 256 → 1024), with a bias, and accumulating into gradients
  // that already hold values.
  struct Shape {
    int BT, IC, OC;
  };
  for (const Shape sh : {Shape{1, 1, 1}, Shape{5, 3, 7}, Shape{13, 33, 17}, Shape{197, 300, 45}, Shape{512, 256, 1024},
                         Shape{256, 1024, 256}, Shape{40, 520, 70}}) {
    INFO("BT " << sh.BT << ", IC " << sh.IC << ", OC " << sh.OC);
    const size_t nx = size_t(sh.BT) * sh.IC, nw = size_t(sh.OC) * sh.IC, no = size_t(sh.BT) * sh.OC;
    const V x = random_floats(nx, 1), w = random_floats(nw, 2), bias = random_floats(size_t(sh.OC), 3),
            dout = random_floats(no, 4), dx0 = random_floats(nx, 5), dw0 = random_floats(nw, 6),
            db0 = random_floats(size_t(sh.OC), 7);
    V out(no), out_ref(no);
    train::linear_forward(out.data(), x.data(), w.data(), bias.data(), sh.BT, sh.IC, sh.OC);
    ops::reference::linear_forward(out_ref.data(), x.data(), w.data(), bias.data(), sh.BT, sh.IC, sh.OC);
    check_rel(out, out_ref, 1e-5, "out");
    V dx = dx0, dw = dw0, db = db0, dx_ref = dx0, dw_ref = dw0, db_ref = db0;
    train::linear_backward(dx.data(), dw.data(), db.data(), dout.data(), x.data(), w.data(), sh.BT, sh.IC, sh.OC);
    ops::reference::linear_backward(dx_ref.data(), dw_ref.data(), db_ref.data(), dout.data(), x.data(), w.data(), sh.BT,
                                    sh.IC, sh.OC);
    check_rel(dx, dx_ref, 1e-5, "dx");
    check_rel(dw, dw_ref, 1e-5, "dweight");
    check_rel(db, db_ref, 1e-5, "dbias");
    dw = dw0;  // dx may be null: only dweight accumulates
    train::linear_backward(nullptr, dw.data(), nullptr, dout.data(), x.data(), w.data(), sh.BT, sh.IC, sh.OC);
    check_rel(dw, dw_ref, 1e-5, "dweight without dx");
  }
}
