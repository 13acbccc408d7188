// The project's C++ is built without FMA contraction (-ffp-contract=off, the top-level
// CMakeLists.txt): a*b+c rounds the product, then the sum, on every CPU — as the kernels do
// (--fmad=false) — so x86 and aarch64 (where g++ would otherwise fuse it) give the same bits.
// On a CPU without FMA this cannot fail; on aarch64, or x86 built with -march=native, it fails
// when the flag is missing.
#include <gtest/gtest.h>

#include <cmath>

namespace {

// volatile: the compiler must compute at run time, with the flags of this translation unit.
float mul_add(float a, float b, float c) {
  volatile float va = a, vb = b, vc = c;
  return va * vb + vc;
}
double mul_add(double a, double b, double c) {
  volatile double va = a, vb = b, vc = c;
  return va * vb + vc;
}

TEST(FpContract, AProductAndASumRoundTwice) {
  // (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24: the float product rounds the 2^-24 away (a tie, to even), so
  // the rounded sum is 0; a fused multiply-add keeps it.
  const float a = 1.0f + std::ldexp(1.0f, -12), c = -(1.0f + std::ldexp(1.0f, -11));
  EXPECT_EQ(std::fma(a, a, c), std::ldexp(1.0f, -24)) << "the fused result, for comparison";
  EXPECT_EQ(mul_add(a, a, c), 0.0f) << "a*b+c was fused: build with -ffp-contract=off";
  const double ad = 1.0 + std::ldexp(1.0, -27), cd = -(1.0 + std::ldexp(1.0, -26));
  EXPECT_EQ(std::fma(ad, ad, cd), std::ldexp(1.0, -54));
  EXPECT_EQ(mul_add(ad, ad, cd), 0.0);
}

}  // namespace
