#include "core/loss.hpp"

#include <cmath>
#include <cstdlib>
#include <functional>
#include <span>
#include <stdexcept>

#include "core/format.hpp"
#include "core/json.hpp"

namespace optdp {

namespace {

constexpr const char* kLossDomain =
    "loss must be 'absolute', 'squared', 'binary', 'power:P' (P > 0) or a JSON (n+1)x(n+1) matrix";

}  // namespace

void check_n(std::int64_t n, std::int64_t max, const char* name) {
  if (n < 0 || n > max)
    throw std::invalid_argument(std::string(name) + " must be an integer in [0, " + std::to_string(max) +
                                "], but is " + std::to_string(n));
}

Loss Loss::absolute(std::int64_t n) { return parse("absolute", n); }

Loss Loss::parse(std::string_view text, std::int64_t n) {
  check_n(n, kMaxMatrixN);
  Loss l;
  l.n_ = n;
  const auto N = static_cast<std::size_t>(n + 1);
  auto fill = [&](auto f) {
    l.by_distance_.resize(N);
    for (std::size_t d = 0; d < N; ++d) l.by_distance_[d] = f(static_cast<double>(d));
  };
  if (text == "absolute") {
    l.kind_ = Kind::Absolute;
    fill([](double d) { return d; });
    return l;
  }
  if (text == "squared") {
    l.kind_ = Kind::Squared;
    fill([](double d) { return d * d; });
    return l;
  }
  if (text == "binary") {
    l.kind_ = Kind::Binary;
    fill([](double d) { return d == 0 ? 0.0 : 1.0; });
    return l;
  }
  if (text.substr(0, 6) == "power:") {
    const std::string num(text.substr(6));
    char* end = nullptr;
    const double p = num.empty() || std::isspace(static_cast<unsigned char>(num[0])) ? NAN : std::strtod(num.c_str(), &end);
    if (!(end == num.c_str() + num.size() && p > 0 && std::isfinite(p)))
      throw std::invalid_argument(std::string(kLossDomain) + ", but is " + quote_text(text) + ": P must be a finite number > 0");
    if (n > kMaxGeneralLossN)
      throw std::invalid_argument("n must be at most " + std::to_string(kMaxGeneralLossN) +
                                  " with a power loss (the remap is O(n^3)), but is " + std::to_string(n));
    if (!std::isfinite(std::pow(static_cast<double>(n), p)))  // n^P is the largest entry
      throw std::invalid_argument("loss must be finite, but " + quote_text(text) + " gives n^P = inf for n = " +
                                  std::to_string(n));
    l.kind_ = Kind::Power;
    l.p_ = p;
    fill([p](double d) { return std::pow(d, p); });
    return l;
  }
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || text[first] != '[')
    throw std::invalid_argument(std::string(kLossDomain) + ", but is " + quote_text(text));
  if (n > kMaxGeneralLossN)
    throw std::invalid_argument("n must be at most " + std::to_string(kMaxGeneralLossN) +
                                " with a JSON loss matrix (the remap is O(n^3)), but is " + std::to_string(n));
  const auto m = parse_json_matrix(text, "loss", N, N);
  return of_rows(n, m.size(), [&](std::size_t i) { return std::span<const double>(m[i]); });
}

Loss Loss::of_rows(std::int64_t n, std::size_t rows, const std::function<std::span<const double>(std::size_t)>& row) {
  check_n(n, kMaxMatrixN);
  if (n > kMaxGeneralLossN)
    throw std::invalid_argument("n must be at most " + std::to_string(kMaxGeneralLossN) +
                                " with a loss matrix (the remap is O(n^3)), but is " + std::to_string(n));
  const auto N = static_cast<std::size_t>(n + 1);
  if (rows != N)
    throw std::invalid_argument("loss must be a " + std::to_string(N) + "x" + std::to_string(N) +
                                " matrix for n = " + std::to_string(n) + ", but has " + std::to_string(rows) +
                                " rows");
  Loss l;
  l.n_ = n;
  l.kind_ = Kind::Matrix;
  l.matrix_.reserve(N * N);
  for (std::size_t i = 0; i < N; ++i) {
    const std::span<const double> mi = row(i);
    if (mi.size() != N)
      throw std::invalid_argument("loss must be a " + std::to_string(N) + "x" + std::to_string(N) + " matrix, but row " +
                                  std::to_string(i) + " has " + std::to_string(mi.size()) + " entries");
    for (std::size_t r = 0; r < N; ++r) {
      if (!(mi[r] >= 0))
        throw std::invalid_argument("loss must be non-negative, but loss[" + std::to_string(i) + "][" +
                                    std::to_string(r) + "] is " + format_double(mi[r]));
      l.matrix_.push_back(mi[r]);
    }
    // Non-decreasing in |i - r|: the largest loss at distance d is at most the smallest at d + 1.
    const auto ii = static_cast<std::int64_t>(i);
    for (std::int64_t d = 0; d < n; ++d) {
      double hi_d = -1, lo_next = INFINITY;
      for (std::int64_t r : {ii - d, ii + d})
        if (r >= 0 && r <= n) hi_d = std::max(hi_d, mi[static_cast<std::size_t>(r)]);
      for (std::int64_t r : {ii - d - 1, ii + d + 1})
        if (r >= 0 && r <= n) lo_next = std::min(lo_next, mi[static_cast<std::size_t>(r)]);
      if (hi_d > lo_next)
        throw std::invalid_argument("loss must be non-decreasing in |i - r| along each row, but row " +
                                    std::to_string(i) + " has " + format_double(hi_d) + " at distance " +
                                    std::to_string(d) + " and " + format_double(lo_next) + " at distance " +
                                    std::to_string(d + 1));
    }
  }
  return l;
}

std::vector<double> parse_prior(std::string_view text, std::int64_t n) {
  check_n(n, kMaxMatrixN);
  const auto N = static_cast<std::size_t>(n + 1);
  if (text == "uniform") return std::vector<double>(N, 1.0 / static_cast<double>(N));
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || text[first] != '[')
    throw std::invalid_argument("prior must be 'uniform' or a JSON array of n+1 non-negative numbers, but is " +
                                quote_text(text));
  return prior_of_values(parse_json_array(text, "prior", N), n);
}

std::vector<double> prior_of_values(std::vector<double> p, std::int64_t n) {
  check_n(n, kMaxMatrixN);
  const auto N = static_cast<std::size_t>(n + 1);
  if (p.size() != N)
    throw std::invalid_argument("prior must have n+1 = " + std::to_string(N) + " entries, but has " +
                                std::to_string(p.size()));
  double total = 0;
  for (std::size_t i = 0; i < N; ++i) {
    if (!(p[i] >= 0))
      throw std::invalid_argument("prior must be non-negative, but prior[" + std::to_string(i) + "] is " +
                                  format_double(p[i]));
    total += p[i];
  }
  if (!(total > 0) || !std::isfinite(total))
    throw std::invalid_argument("prior must have a positive finite sum, but its sum is " + format_double(total));
  for (auto& v : p) v /= total;
  return p;
}

}  // namespace optdp
