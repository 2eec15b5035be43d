// optdp core: privacy levels and their validation.
//
// alpha = e^-epsilon. A mechanism with parameter alpha is (-ln alpha)-DP, so a
// conversion from epsilon must never make alpha smaller than e^-epsilon:
// alpha_of_epsilon rounds UP (the alpha used is at least as private as the
// epsilon asked for), epsilon_of_alpha rounds UP too (the guarantee reported is
// never stronger than the true one).
#pragma once

namespace optdp {

// Throws std::invalid_argument "<name> must be a finite number > 0, but is X".
void check_positive(double v, const char* name);

// Bounds [lower, upper] of a clamped statistic: both finite, lower < upper,
// and upper - lower finite; otherwise std::invalid_argument "lower must be
// finite, but is -inf", "lower must be less than upper, but lower is 5 and
// upper is 1", "<width_name> must be finite, but is inf".
void check_bounds(double lower, double upper, const char* width_name = "upper - lower");

// e^-eps rounded up to a double in (0, 1). eps must be finite and > 0, and at
// least 2^-53 (below that e^-eps rounds to 1, which is no mechanism at all).
double alpha_of_epsilon(double eps, const char* name = "eps");

// ln(alpha) in binary128, accurate for every double alpha in (0, 1).
__float128 log_alpha(double alpha);

// -ln(alpha) rounded up; alpha must be in (0, 1).
double epsilon_of_alpha(double alpha, const char* name = "alpha");

}  // namespace optdp
