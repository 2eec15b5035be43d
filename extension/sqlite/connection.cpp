#include "sqlite/connection.hpp"

namespace optdp::sql {

Connection::Connection() = default;

void Connection::seed(std::optional<std::uint64_t> seed) {
  if (seed) seeded_ = std::make_unique<SeededRng>(*seed);
  else seeded_.reset();
}

const TwoSidedGeometric& Connection::two_sided_geometric(double alpha) {
  if (!geo_cache_ || geo_cache_->alpha() != alpha) geo_cache_ = std::make_unique<TwoSidedGeometric>(alpha);
  return *geo_cache_;
}

const IntegerStaircase& Connection::integer_staircase(double eps, std::int64_t D, std::int64_t r) {
  const StaircaseKey key{eps, D, r};
  if (!stair_cache_ || !(stair_key_ == key)) {
    stair_cache_ = std::make_unique<IntegerStaircase>(eps, D, r);
    stair_key_ = key;
  }
  return *stair_cache_;
}

const LevelChain& Connection::level_chain(const std::vector<double>& alphas) {
  if (!levels_cache_ || levels_cache_->alphas() != alphas) levels_cache_ = std::make_unique<LevelChain>(alphas);
  return *levels_cache_;
}

void Connection::release(void* self) {
  auto* c = static_cast<Connection*>(self);
  if (--c->refs_ == 0) delete c;
}

}  // namespace optdp::sql
