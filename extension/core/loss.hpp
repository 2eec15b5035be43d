// optdp core: a user's loss function and prior over the true result {0..n}.
//
// Loss: 'absolute' |i - r|, 'squared' (i - r)^2, 'binary' [i != r],
// 'power:P' |i - r|^P (P > 0, finite), or a JSON (n+1) x (n+1) matrix l[i][r]
// that is non-negative and non-decreasing in |i - r| along each row
// (|i - r| < |i - r'| implies l[i][r] <= l[i][r']).
// Prior: 'uniform', or a JSON array of n+1 non-negative finite numbers with a
// positive sum (normalised to 1).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace optdp {

// Sizes the parsers accept (before any work is done).
constexpr std::int64_t kMaxMatrixN = 5000;       // streamed matrices, remap with absolute/squared/binary
constexpr std::int64_t kMaxGeneralLossN = 400;   // O(n^3) remap: power and JSON-matrix losses
constexpr std::int64_t kMaxLpN = 40;             // functions that solve a linear program

// Throws unless 0 <= n <= max: "n must be an integer in [0, max], but is X".
void check_n(std::int64_t n, std::int64_t max, const char* name = "n");

class Loss {
 public:
  enum class Kind { Absolute, Squared, Binary, Power, Matrix };
  // Parses text for results in {0..n}; throws std::invalid_argument
  // "loss must be 'absolute', 'squared', 'binary', 'power:P' or a JSON matrix ..., but ...".
  static Loss parse(std::string_view text, std::int64_t n);
  static Loss absolute(std::int64_t n);
  // A matrix loss from its rows (engines with array types): rows(i) is row i
  // of `rows` rows; the same checks and messages as a JSON matrix's.
  static Loss of_rows(std::int64_t n, std::size_t rows, const std::function<std::span<const double>(std::size_t)>& row);

  Kind kind() const { return kind_; }
  std::int64_t n() const { return n_; }
  double power() const { return p_; }
  // l(i, r) for i, r in {0..n}.
  double operator()(std::int64_t i, std::int64_t r) const {
    if (kind_ == Kind::Matrix) return matrix_[static_cast<std::size_t>(i * (n_ + 1) + r)];
    return by_distance_[static_cast<std::size_t>(i > r ? i - r : r - i)];
  }
  // Whether the O(n^3) general remap is needed (and the lower size cap applies).
  bool general() const { return kind_ == Kind::Power || kind_ == Kind::Matrix; }

 private:
  Kind kind_ = Kind::Absolute;
  std::int64_t n_ = 0;
  double p_ = 1;
  std::vector<double> by_distance_;  // distance-based kinds: l at |i - r| = d
  std::vector<double> matrix_;       // Kind::Matrix, row-major (n+1)^2
};

// Parses a prior over {0..n}; returns n+1 probabilities summing to 1.
std::vector<double> parse_prior(std::string_view text, std::int64_t n);
// The same from the prior's n+1 numbers (engines with array types), with the
// same checks and messages as the JSON array's.
std::vector<double> prior_of_values(std::vector<double> p, std::int64_t n);

}  // namespace optdp
