// The PostgreSQL tests' bridge to the SQLite suite's audit and to the core's
// exact laws (test_aggregates.py runs it; the releases come from the server).
//
//   audit_tool audit [dim [delta]]
//       stdin: four lines of numbers, the pilot releases of D, of D', then
//       the main releases of D, of D' (dim numbers per release, flattened).
//       stdout: "eps_lb <value>" and the summary line, from the same event
//       family and Clopper-Pearson bounds as tests/sqlite/audit_test.cpp
//       (tests/common/audit.hpp, beta = 1e-6); with delta, the bound for
//       (eps, delta)-DP, as tests/sqlite/gaussian_sql_test.cpp audits.
//   audit_tool eps_of_rho <rho> <delta>
//       stdout: the epsilon the ledger counts a rho-zCDP release as at that
//       delta (core/accounting.hpp, epsilon_of_rho).
//   audit_tool dgauss <sigma2> <lo> <hi>
//       stdout: "z p" for z in [lo, hi], p the discrete Gaussian's
//       probability of z, exp(-z^2 / (2 sigma2)) over its sum over every z
//       with exp(-z^2 / (2 sigma2)) above 1e-300 (the rest adds less than
//       1e-290 of it).
//   audit_tool selection <eps> <sensitivity> <method> <score>...
//       stdout: the exact law of private_select on those scores, one
//       probability per line (core/selection.hpp).
//   audit_tool keep <a> <b>
//       stdout: the probability that level b adds no noise to level a
//       (core/levels.hpp).
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <cmath>

#include "audit.hpp"
#include "core/accounting.hpp"
#include "core/levels.hpp"
#include "core/selection.hpp"

namespace {

optdp::test::Releases read_line(std::size_t dim) {
  std::string line;
  if (!std::getline(std::cin, line)) throw std::runtime_error("audit_tool: expected four lines of releases");
  std::istringstream in(line);
  optdp::test::Releases r;
  r.dim = dim;
  double v;
  while (in >> v) r.values.push_back(v);
  if (r.values.size() % dim) throw std::runtime_error("audit_tool: a line is not whole releases");
  return r;
}

}  // namespace

int main(int argc, char** argv) try {
  const std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "audit") {
    const std::size_t dim = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 1;
    const double delta = argc > 3 ? std::strtod(argv[3], nullptr) : 0;
    const auto pilot_a = read_line(dim), pilot_b = read_line(dim), a = read_line(dim), b = read_line(dim);
    const auto events = optdp::test::threshold_events(pilot_a, pilot_b);
    const auto r = optdp::test::audit_eps(a, b, events, 1e-6, delta);
    std::printf("eps_lb %.17g\n%s\n", r.eps_lb, r.summary().c_str());
    return 0;
  }
  if (cmd == "selection" && argc > 5) {
    std::vector<double> scores;
    for (int i = 5; i < argc; ++i) scores.push_back(std::strtod(argv[i], nullptr));
    const auto law = optdp::selection_probabilities(
        optdp::selection_exponents(scores, std::strtod(argv[2], nullptr), std::strtod(argv[3], nullptr)),
        optdp::parse_selection_method(argv[4]));
    for (double p : law) std::printf("%.17g\n", p);
    return 0;
  }
  if (cmd == "eps_of_rho" && argc == 4) {
    std::printf("%.17g\n", optdp::zcdp::epsilon_of_rho(std::strtod(argv[2], nullptr), std::strtod(argv[3], nullptr)));
    return 0;
  }
  if (cmd == "dgauss" && argc == 5) {
    const double s2 = std::strtod(argv[2], nullptr);
    const long long lo = std::strtoll(argv[3], nullptr, 10), hi = std::strtoll(argv[4], nullptr, 10);
    // exp(-z^2 / (2 s2)) >= 1e-300 for |z| <= sqrt(2 s2 * 690.8)
    const auto m = static_cast<long long>(std::ceil(std::sqrt(2 * s2 * 690.8)));
    long double norm = 0;
    for (long long z = -m; z <= m; ++z) norm += std::exp(-static_cast<long double>(z) * z / (2 * s2));
    for (long long z = lo; z <= hi; ++z)
      std::printf("%lld %.17g\n", z, static_cast<double>(std::exp(-static_cast<long double>(z) * z / (2 * s2)) / norm));
    return 0;
  }
  if (cmd == "keep" && argc == 4) {
    std::printf("%.17g\n", optdp::keep_probability(std::strtod(argv[2], nullptr), std::strtod(argv[3], nullptr)));
    return 0;
  }
  std::fprintf(stderr, "usage: audit_tool audit [dim [delta]] | selection eps sensitivity method score... | keep a b | "
                       "eps_of_rho rho delta | dgauss sigma2 lo hi\n");
  return 2;
} catch (const std::exception& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
