// The layers' arithmetic contract (executor/layer_ops.hpp) on the cpu backend: the row-major
// products the layers ask for, single and batched, against a plain triple loop for every
// transpose and with padded rows and gaps between batch items (the layout logic the cuda backend
// runs on cuBLAS unchanged), and the row-wise operations against values worked by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <vector>

#include "executor/cpu_ops.hpp"
#include "executor/layer_ops.hpp"

using namespace recycle::executor;

namespace {

/// Element (r, c) of a row-major matrix with `ld` floats per row, or of its transpose.
float at(const float* m, int ld, bool trans, int r, int c) {
  return trans ? m[std::ptrdiff_t{c} * ld + r] : m[std::ptrdiff_t{r} * ld + c];
}

/// C = alpha op(A) op(B) + beta C by the definition, row-major.
void reference(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda,
               const float* b, int ldb, float beta, float* c, int ldc) {
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int p = 0; p < k; ++p) sum += double{at(a, lda, ta, i, p)} * at(b, ldb, tb, p, j);
      float& out = c[std::ptrdiff_t{i} * ldc + j];
      out = static_cast<float>(alpha * sum + beta * out);
    }
  }
}

/// 0.25, -0.5, 0.75, ... : small values whose products are exact enough to compare at 1e-5.
std::vector<float> pattern(std::size_t n, int shift) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>((static_cast<int>(i) * 7 + shift) % 11 - 5) * 0.25F;
  return v;
}

}  // namespace

TEST_CASE("row-major products on column-major BLAS, single and batched, every transpose") {
  CpuOps ops;
  const int m = 3, n = 4, k = 5, count = 3;
  for (const bool ta : {false, true}) {
    for (const bool tb : {false, true}) {
      CAPTURE(ta);
      CAPTURE(tb);
      // Rows padded by 2 floats, batch items 7 floats apart beyond their size.
      const int lda = (ta ? m : k) + 2, ldb = (tb ? k : n) + 2, ldc = n + 2;
      const std::ptrdiff_t sa = std::ptrdiff_t{ta ? k : m} * lda + 7;
      const std::ptrdiff_t sb = std::ptrdiff_t{tb ? n : k} * ldb + 7;
      const std::ptrdiff_t sc = std::ptrdiff_t{m} * ldc + 7;
      const std::vector<float> a = pattern(static_cast<std::size_t>(sa * count), 1);
      const std::vector<float> b = pattern(static_cast<std::size_t>(sb * count), 4);
      const std::vector<float> c0 = pattern(static_cast<std::size_t>(sc * count), 9);

      std::vector<float> single = c0, expected = c0;
      gemm_row_major(ops, ta, tb, m, n, k, a.data(), lda, b.data(), ldb, 0.5F, single.data(), ldc);
      reference(ta, tb, m, n, k, 1.0F, a.data(), lda, b.data(), ldb, 0.5F, expected.data(), ldc);
      for (std::size_t i = 0; i < single.size(); ++i)
        CHECK(single[i] == doctest::Approx(expected[i]).epsilon(1e-5));

      std::vector<float> batched = c0;
      expected = c0;
      gemm_row_major_batched(ops, ta, tb, m, n, k, -1.5F, a.data(), lda, sa, b.data(), ldb, sb,
                             2.0F, batched.data(), ldc, sc, count);
      for (int i = 0; i < count; ++i) {
        reference(ta, tb, m, n, k, -1.5F, a.data() + i * sa, lda, b.data() + i * sb, ldb, 2.0F,
                  expected.data() + i * sc, ldc);
      }
      // Padding and gaps are left as they were.
      for (std::size_t i = 0; i < batched.size(); ++i)
        CHECK(batched[i] == doctest::Approx(expected[i]).epsilon(1e-5));
    }
  }
}

namespace {

/// A norm's input gradient over one row of 3 for an output gradient (1, 0, 0), added to
/// (10, 10, 10) (the backward adds to what the input gradient holds).
std::vector<float> norm_input_gradient(CpuOps& ops, const std::vector<float>& xhat,
                                       const std::vector<float>& rstd,
                                       const std::vector<float>& gain, bool centered) {
  const std::vector<float> dout{1, 0, 0};
  std::vector<float> dx{10, 10, 10};
  ops.layer_norm_backward(dx.data(), dout.data(), xhat.data(), rstd.data(), gain.data(), centered,
                          1, 3);
  return dx;
}

}  // namespace

TEST_CASE("layer norm, its input gradient and its weight gradient, by hand") {
  CpuOps ops;
  // One row (1, 2, 3): mean 2, variance 2/3, xhat = (-1, 0, 1) sqrt(3/2) (epsilon aside).
  const std::vector<float> x{1, 2, 3}, gain{2, 1, 0.5F}, bias{0, 1, 0};
  std::vector<float> out(3), xhat(3), rstd(1);
  ops.layer_norm(out.data(), xhat.data(), rstd.data(), x.data(), gain.data(), bias.data(), 1, 3);
  const double s = 1 / std::sqrt(2.0 / 3 + 1e-5);
  CHECK(rstd[0] == doctest::Approx(s));
  CHECK(xhat[0] == doctest::Approx(-s));
  CHECK(xhat[1] == doctest::Approx(0.0));
  CHECK(out[0] == doctest::Approx(-2 * s));
  CHECK(out[1] == doctest::Approx(1.0));
  CHECK(out[2] == doctest::Approx(0.5 * s));

  // dout = (1, 0, 0): g = dout gain = (2, 0, 0); sum g = 2, sum g xhat = -2s;
  // dx = s/3 (3 g - 2 + 2 s xhat) = s/3 (6 - 2 - 2 s^2, -2, -2 + 2 s^2).
  const std::vector<float> dout{1, 0, 0};
  const std::vector<float> dx = norm_input_gradient(ops, xhat, rstd, gain, true);
  CHECK(dx[0] == doctest::Approx(10 + s / 3 * (4 - 2 * s * s)));
  CHECK(dx[1] == doctest::Approx(10 + s / 3 * -2));
  CHECK(dx[2] == doctest::Approx(10 + s / 3 * (-2 + 2 * s * s)));
  // The input gradient of a layer norm sums to zero over the row (its output ignores a shift).
  CHECK(dx[0] + dx[1] + dx[2] == doctest::Approx(30.0));

  std::vector<float> dgain{1, 1, 1}, dbias{0, 0, 0};
  ops.layer_norm_weight(dgain.data(), dbias.data(), dout.data(), xhat.data(), 1, 3);
  CHECK(dgain[0] == doctest::Approx(1 - s));
  CHECK(dgain[1] == doctest::Approx(1.0));
  CHECK(dbias == std::vector<float>{1, 0, 0});
}

TEST_CASE("RMSNorm (no bias, not centered), its input gradient and its weight gradient, by hand") {
  CpuOps ops;
  // One row (1, 2, 3): mean square 14/3, r = 1 / sqrt(14/3 + 1e-5), xhat = x r, out = xhat gain.
  const std::vector<float> x{1, 2, 3}, gain{2, 1, 0.5F};
  std::vector<float> out(3), xhat(3), rstd(1);
  ops.layer_norm(out.data(), xhat.data(), rstd.data(), x.data(), gain.data(), nullptr, 1, 3);
  const double r = 1 / std::sqrt(14.0 / 3 + 1e-5);
  CHECK(rstd[0] == doctest::Approx(r));
  CHECK(xhat[2] == doctest::Approx(3 * r));
  CHECK(out[0] == doctest::Approx(2 * r));
  CHECK(out[1] == doctest::Approx(2 * r));
  CHECK(out[2] == doctest::Approx(1.5 * r));

  // dout = (1, 0, 0): g = (2, 0, 0), sum g xhat = 2r; dx = r/3 (3 g - 2 r^2 x) =
  // r/3 (6 - 2 r^2, -4 r^2, -6 r^2).
  const std::vector<float> dout{1, 0, 0};
  const std::vector<float> dx = norm_input_gradient(ops, xhat, rstd, gain, false);
  CHECK(dx[0] == doctest::Approx(10 + r / 3 * (6 - 2 * r * r)));
  CHECK(dx[1] == doctest::Approx(10 + r / 3 * (-4 * r * r)));
  CHECK(dx[2] == doctest::Approx(10 + r / 3 * (-6 * r * r)));
  // The output ignores a scaling of x, so the input gradient is orthogonal to x.
  CHECK((dx[0] - 10) + 2 * (dx[1] - 10) + 3 * (dx[2] - 10) == doctest::Approx(0.0).scale(1));

  std::vector<float> dgain{1, 1, 1};
  ops.layer_norm_weight(dgain.data(), nullptr, dout.data(), xhat.data(), 1, 3);
  CHECK(dgain[0] == doctest::Approx(1 + r));
  CHECK(dgain[1] == 1.0F);
}

TEST_CASE("SwiGLU and its backward, by hand") {
  CpuOps ops;
  // One row: gate (0, 1, -1), up (2, 3, 4). SiLU(0) = 0, SiLU(1) = 1 / (1 + e^-1) = 0.7310586,
  // SiLU(-1) = -1 / (1 + e) = -0.2689414.
  const std::vector<float> u{0, 1, -1, 2, 3, 4};
  std::vector<float> out(3);
  ops.swiglu(out.data(), u.data(), 1, 3);
  CHECK(out[0] == 0.0F);
  CHECK(out[1] == doctest::Approx(3 * 0.7310586));
  CHECK(out[2] == doctest::Approx(4 * -0.2689414));
  // dout = 1: d gate = up SiLU'(g), SiLU'(0) = 0.5, SiLU'(1) = s (1 + 1 - s) = 0.9276705 with
  // s = 0.7310586, SiLU'(-1) = 1 - SiLU'(1) (SiLU(g) - SiLU(-g) = g); d up = SiLU(g).
  const std::vector<float> dout{1, 1, 1};
  std::vector<float> du(6);
  ops.swiglu_backward(du.data(), dout.data(), u.data(), 1, 3);
  CHECK(du[0] == doctest::Approx(1.0));
  CHECK(du[1] == doctest::Approx(3 * 0.9276705));
  CHECK(du[2] == doctest::Approx(4 * (1 - 0.9276705)));
  CHECK(du[3] == 0.0F);
  CHECK(du[4] == doctest::Approx(0.7310586));
  CHECK(du[5] == doctest::Approx(-0.2689414));
}

TEST_CASE("rotary embedding of two heads, by hand, and its inverse") {
  CpuOps ops;
  // Rows of 10 floats: two heads of 4 features, then 2 not rotated. Sequence 2: row 0 is
  // position 0 (no rotation), row 1 position 1: pair (0, 2) by 1 radian, pair (1, 3) by
  // 10000^(-2/4) = 0.01 radians.
  const std::vector<float> x{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  std::vector<float> y = x;
  ops.rotary(y.data(), 2, 10, 2, 4, 2, false);
  for (std::size_t i = 0; i < 10; ++i) CHECK(y[i] == x[i]);
  const double c1 = std::cos(1.0), s1 = std::sin(1.0), c2 = std::cos(0.01), s2 = std::sin(0.01);
  CHECK(y[10] == doctest::Approx(1 * c1 - 3 * s1));
  CHECK(y[12] == doctest::Approx(3 * c1 + 1 * s1));
  CHECK(y[11] == doctest::Approx(2 * c2 - 4 * s2));
  CHECK(y[13] == doctest::Approx(4 * c2 + 2 * s2));
  CHECK(y[14] == doctest::Approx(5 * c1 - 7 * s1));  // the second head, the same angles
  CHECK(y[17] == doctest::Approx(8 * c2 + 6 * s2));
  CHECK(y[18] == 9.0F);
  CHECK(y[19] == 10.0F);
  ops.rotary(y.data(), 2, 10, 2, 4, 2, true);
  for (std::size_t i = 0; i < x.size(); ++i) CHECK(y[i] == doctest::Approx(x[i]));
}

TEST_CASE("causal softmax and its backward, by hand") {
  CpuOps ops;
  // Two 2 x 2 matrices: row 0 of each sees only column 0; row 1 sees both.
  std::vector<float> p{5, 9, 0, std::log(3.0F), 1, 1, 2, 2};
  ops.causal_softmax(p.data(), 2, 2);
  CHECK(p[0] == 1.0F);
  CHECK(p[1] == 0.0F);  // masked
  CHECK(p[2] == doctest::Approx(0.25));
  CHECK(p[3] == doctest::Approx(0.75));
  CHECK(p[4] == 1.0F);
  CHECK(p[5] == 0.0F);
  CHECK(p[6] == doctest::Approx(0.5));
  CHECK(p[7] == doctest::Approx(0.5));
  // dS = P (dP - sum(dP P)): row (0.25, 0.75) with dP (4, 0): dot 1, dS = (0.75, -0.75).
  std::vector<float> dp{3, 3, 4, 0, 1, 1, 1, 1};
  ops.softmax_backward(dp.data(), p.data(), 2, 2);
  CHECK(dp[0] == 0.0F);  // a row with one entry has no gradient
  CHECK(dp[1] == 0.0F);
  CHECK(dp[2] == doctest::Approx(0.75));
  CHECK(dp[3] == doctest::Approx(-0.75));
  CHECK(dp[6] == doctest::Approx(0.0));  // equal upstream gradients: none through a softmax
}

TEST_CASE("GELU and its derivative at points worked by hand") {
  CpuOps ops;
  const std::vector<float> u{0, 1, -1};
  std::vector<float> g(3);
  ops.gelu(g.data(), u.data(), 3);
  // GELU(1) = 0.5 (1 + tanh(sqrt(2/pi) 1.044715)) = 0.841192; GELU(-1) = 1 - ... - 1.
  CHECK(g[0] == 0.0F);
  CHECK(g[1] == doctest::Approx(0.841192).epsilon(1e-5));
  CHECK(g[2] == doctest::Approx(0.841192 - 1).epsilon(1e-5));
  std::vector<float> du{2, 1, 1};
  ops.gelu_backward(du.data(), u.data(), 3);
  CHECK(du[0] == doctest::Approx(1.0));  // 2 x GELU'(0) = 2 x 0.5
  // GELU'(1) + GELU'(-1) = 1 (GELU(u) - GELU(-u) = u).
  CHECK(du[1] + du[2] == doctest::Approx(1.0));
}
