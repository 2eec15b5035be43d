// private_groups: a grouped release by privacy unit (core/grouped.hpp,
// docs/grouped.md), a table function that owns the whole pipeline.
//
//   SELECT * FROM private_groups(rows_query, epsilon [, options [, keys_query]])
//     -> one row (key, count, sum, mean) per released key, sorted by key
//
// rows_query returns (unit, key) or (unit, key, value) and must end with
// ORDER BY 1, so that each unit's rows arrive together; units are INTEGERs
// (rows whose unit is not an INTEGER are skipped). keys_query returns one
// column of public keys; without it, keys are chosen by partition selection.
// Only the two queries given as arguments are prepared and run, on optdp's
// own read-only connection, checked by the allow-list when prepared
// (guarded.hpp, docs/boundary.md "Queries optdp runs"). In analyst mode the
// rows query's program is also checked against the owner's declared units
// (units.hpp, docs/boundary.md "Who a row belongs to"); outside it, the
// query defines the unit.
#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/grouped.hpp"
#include "core/privacy.hpp"
#include "sqlite/analyst.hpp"
#include "sqlite/args.hpp"
#include "sqlite/connection.hpp"
#include "sqlite/functions.hpp"
#include "sqlite/guarded.hpp"
#include "sqlite/release.hpp"
#include "sqlite/stmt.hpp"
#include "sqlite/params.hpp"
#include "sqlite/sql_text.hpp"
#include "sqlite/units.hpp"
#include "sqlite/vtab.hpp"

namespace optdp::sql {

namespace {

constexpr const char* kName = "private_groups";

// A key's identity, as GROUP BY sees it: numbers by value (an integral REAL
// is the INTEGER of that value), text and blobs by their bytes.
struct KeyView {
  int type;  // SQLITE_NULL, SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT or SQLITE_BLOB
  std::int64_t i = 0;
  double d = 0;
  std::string_view bytes;
};

KeyView key_of(sqlite3_value* v) {
  KeyView k{sqlite3_value_type(v), 0, 0, {}};
  switch (k.type) {
    case SQLITE_INTEGER: k.i = sqlite3_value_int64(v); break;
    case SQLITE_FLOAT: {
      k.d = sqlite3_value_double(v);
      if (k.d >= -0x1p63 && k.d < 0x1p63 && k.d == static_cast<double>(static_cast<std::int64_t>(k.d))) {
        k.type = SQLITE_INTEGER;
        k.i = static_cast<std::int64_t>(k.d);
      }
      break;
    }
    case SQLITE_TEXT: {
      const auto* p = reinterpret_cast<const char*>(sqlite3_value_text(v));
      k.bytes = std::string_view(p ? p : "", static_cast<std::size_t>(sqlite3_value_bytes(v)));
      break;
    }
    case SQLITE_BLOB: {
      const auto* p = static_cast<const char*>(sqlite3_value_blob(v));
      k.bytes = std::string_view(p ? p : "", static_cast<std::size_t>(sqlite3_value_bytes(v)));
      break;
    }
    default: break;
  }
  return k;
}

struct Key {
  int type;
  std::int64_t i;
  double d;
  std::string bytes;
  KeyView view() const { return KeyView{type, i, d, bytes}; }
};

bool is_number(const KeyView& k) { return k.type == SQLITE_INTEGER || k.type == SQLITE_FLOAT; }
// A number key's 8 bytes as one word: the INTEGER, or the REAL's bits (key_of
// makes an integral REAL an INTEGER, so equal numbers have equal words).
std::uint64_t number_bits(const KeyView& k) {
  std::uint64_t bits;
  if (k.type == SQLITE_INTEGER) bits = static_cast<std::uint64_t>(k.i);
  else std::memcpy(&bits, &k.d, sizeof bits);
  return bits;
}

// The keys met so far, numbered 0, 1, ... in order of arrival, and an
// open-addressing table from a key to its number (linear probing, a
// power-of-two size at most half full). One lookup per row: the
// std::unordered_map it replaces took a division and two dependent loads per
// lookup. A slot holds a number's value itself (INTEGER and REAL keys) or
// its hash (text, blobs), so a probe reads the table alone but for text.
class KeyIndex {
 public:
  static constexpr std::uint32_t kNone = 0xffffffffu;
  std::uint32_t find(const KeyView& k) const {
    const std::uint64_t w = word(k);
    for (std::size_t i = mix(w, k.type) & mask();; i = (i + 1) & mask()) {
      const Slot& s = slots_[i];
      if (s.n == 0) return kNone;
      if (s.word == w && s.type == k.type && (!by_hash(k.type) || keys_[s.n - 1].bytes == k.bytes)) return s.n - 1;
    }
  }
  // Numbers k, which find() does not know.
  std::uint32_t insert(const KeyView& k) {
    if (2 * (keys_.size() + 1) > slots_.size()) grow();
    const auto n = static_cast<std::uint32_t>(keys_.size());
    keys_.push_back(Key{k.type, k.i, k.d, std::string(k.bytes)});
    place(k, n);
    return n;
  }
  std::vector<Key>& keys() { return keys_; }

 private:
  struct Slot {
    std::uint64_t word = 0;  // word(key)
    std::uint32_t n = 0;     // the key's number + 1; 0: empty
    int type = 0;
  };
  static bool by_hash(int type) { return type == SQLITE_TEXT || type == SQLITE_BLOB; }
  // Equal keys (key_of: an integral REAL is an INTEGER, NaN is NULL) have
  // equal words; for numbers, equal words mean equal keys.
  static std::uint64_t word(const KeyView& k) {
    if (is_number(k)) return number_bits(k);
    return by_hash(k.type) ? std::hash<std::string_view>()(k.bytes) : 0;
  }
  static std::uint64_t mix(std::uint64_t x, int type) {  // splitmix64's finaliser
    x += static_cast<std::uint64_t>(type) * 0x9e3779b97f4a7c15ull;
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  }
  std::size_t mask() const { return slots_.size() - 1; }
  void place(const KeyView& k, std::uint32_t n) {
    const std::uint64_t w = word(k);
    std::size_t i = mix(w, k.type) & mask();
    while (slots_[i].n != 0) i = (i + 1) & mask();
    slots_[i] = Slot{w, n + 1, k.type};
  }
  void grow() {
    slots_.assign(2 * slots_.size(), Slot{});
    for (std::uint32_t n = 0; n < keys_.size(); ++n) place(keys_[n].view(), n);
  }

  std::vector<Slot> slots_ = std::vector<Slot>(16);
  std::vector<Key> keys_;
};

// SQLite's order (BINARY collation): NULL, numbers, text, blobs.
int rank(int type) { return type == SQLITE_NULL ? 0 : (type == SQLITE_TEXT ? 2 : (type == SQLITE_BLOB ? 3 : 1)); }
bool key_less(const Key& a, const Key& b) {
  if (rank(a.type) != rank(b.type)) return rank(a.type) < rank(b.type);
  switch (rank(a.type)) {
    case 0: return false;
    case 1: {
      if (a.type == SQLITE_INTEGER && b.type == SQLITE_INTEGER) return a.i < b.i;
      const long double x = a.type == SQLITE_INTEGER ? static_cast<long double>(a.i) : a.d;
      const long double y = b.type == SQLITE_INTEGER ? static_cast<long double>(b.i) : b.d;
      return x < y;
    }
    default: {
      const int c = std::memcmp(a.bytes.data(), b.bytes.data(), std::min(a.bytes.size(), b.bytes.size()));
      return c != 0 ? c < 0 : a.bytes.size() < b.bytes.size();
    }
  }
}

// Whether the query text ends with ORDER BY 1 [ASC] at depth 0.
bool ends_with_order_by_1(std::string_view q) {
  std::vector<Token> t = tokenize(q);
  while (!t.empty() && is_punct(q, t.back(), ';')) t.pop_back();
  auto word = [&](std::size_t k, const char* w) { return is_word(q, t[k], w); };
  std::size_t n = t.size();
  if (n > 0 && word(n - 1, "asc")) --n;
  if (n < 3 || !word(n - 3, "order") || !word(n - 2, "by")) return false;
  const Token& one = t[n - 1];
  if (!(one.kind == Token::Number && one.end == one.begin + 1 && q[one.begin] == '1')) return false;
  int depth = 0;
  for (std::size_t k = 0; k < n - 3; ++k) depth += is_punct(q, t[k], '(') - is_punct(q, t[k], ')');
  return depth == 0;
}

class ReleasedRows final : public RowSource {
 public:
  struct Row {
    Key key;
    GroupedRelease r;
    std::optional<std::pair<double, double>> mean_interval;
  };
  // The half-widths at the release's confidence: the same for every key (they
  // depend on the parameters alone).
  struct Widths {
    std::optional<std::int64_t> count;
    std::optional<double> sum;
  };
  ReleasedRows(std::vector<Row> rows, bool has_value, Widths w)
      : rows_(std::move(rows)), has_value_(has_value), widths_(w) {}
  bool eof() const override { return i_ >= rows_.size(); }
  void next() override { ++i_; }
  void column(sqlite3_context* ctx, int c) const override {
    const Row& row = rows_[i_];
    switch (c) {
      case 0: {
        const Key& k = row.key;
        if (k.type == SQLITE_INTEGER) sqlite3_result_int64(ctx, k.i);
        else if (k.type == SQLITE_FLOAT) sqlite3_result_double(ctx, k.d);
        else if (k.type == SQLITE_TEXT)
          sqlite3_result_text(ctx, k.bytes.data(), static_cast<int>(k.bytes.size()), SQLITE_TRANSIENT);
        else if (k.type == SQLITE_BLOB)
          sqlite3_result_blob(ctx, k.bytes.data(), static_cast<int>(k.bytes.size()), SQLITE_TRANSIENT);
        else sqlite3_result_null(ctx);
        break;
      }
      case 1: sqlite3_result_int64(ctx, row.r.count); break;
      case 2:
        if (has_value_) sqlite3_result_double(ctx, row.r.sum);
        else sqlite3_result_null(ctx);
        break;
      case 3:
        if (row.r.mean) sqlite3_result_double(ctx, *row.r.mean);
        else sqlite3_result_null(ctx);
        break;
      case 4:
        if (widths_.count) sqlite3_result_int64(ctx, *widths_.count);
        else sqlite3_result_null(ctx);
        break;
      case 5:
        if (has_value_ && widths_.sum) sqlite3_result_double(ctx, *widths_.sum);
        else sqlite3_result_null(ctx);
        break;
      case 6:
      case 7:
        if (row.mean_interval) sqlite3_result_double(ctx, c == 6 ? row.mean_interval->first : row.mean_interval->second);
        else sqlite3_result_null(ctx);
        break;
      case 8:  // quantile (option quantile)
        if (row.r.quantile) sqlite3_result_double(ctx, *row.r.quantile);
        else sqlite3_result_null(ctx);
        break;
      case 9:  // variance (option variance)
        if (row.r.variance) sqlite3_result_double(ctx, *row.r.variance);
        else sqlite3_result_null(ctx);
        break;
      default:  // 10: stddev (option variance)
        if (row.r.stddev) sqlite3_result_double(ctx, *row.r.stddev);
        else sqlite3_result_null(ctx);
        break;
    }
  }

 private:
  std::vector<Row> rows_;
  bool has_value_;
  Widths widths_;
  std::size_t i_ = 0;
};

// A key's identity for KeyPriority: equal keys (as GROUP BY sees them,
// key_of) give equal bytes. A number's are its number_bits, little-endian,
// which KeyPriority::OfUnit::number hashes without a buffer; NULL's are
// none; a text's or a blob's are its own.
std::string_view identity(const KeyView& k) { return k.type == SQLITE_NULL ? std::string_view() : k.bytes; }

bool reads_public_only(void* mode, const char* schema, const char* table) {
  return !is_private_table(*static_cast<const AnalystMode*>(mode), table, schema);
}

// The release, in the order docs/boundary.md requires: every parameter from
// the arguments alone; both queries prepared and checked on optdp's own
// connection (guarded.hpp) before any row is read; the charge; only then the
// rows. After the charge nothing depends on the data but the noisy values:
// whatever goes wrong while reading (an I/O error, an interrupt, memory) is
// reported with one message that quotes nothing.
std::unique_ptr<RowSource> open_private_groups(sqlite3_value** argv, Connection& conn) {
  // Parameters first, all from the arguments alone.
  const std::string query(text_arg(argv[0], "rows_query", "a query returning (unit, key[, value]) ORDER BY 1"));
  const double epsilon = number_arg(argv[1], "epsilon");
  check_positive(epsilon, "epsilon");
  GroupedOptions options;
  if (argv[2] && sqlite3_value_type(argv[2]) != SQLITE_NULL)
    options = parse_grouped_options(text_arg(argv[2], "options", "text 'name=value, ...'"));
  const bool private_keys = !argv[3] || sqlite3_value_type(argv[3]) == SQLITE_NULL;
  std::string keys_query;
  if (!private_keys) keys_query = text_arg(argv[3], "keys_query", "a query returning one column of keys, or NULL");

  // The queries, checked when they are prepared.
  GuardedDb& guarded = guarded_db(conn.db(), conn.guarded_cache());
  // In analyst mode the program prepared is checked (units.hpp): prepare it
  // on the current schema, so that SQLite does not prepare it again.
  if (conn.has_analyst_mode()) guarded.refresh_schema();
  Stmt rows = guarded.prepare(query, "rows_query");
  const int columns = sqlite3_column_count(rows.get());
  if (columns != 2 && columns != 3)
    throw std::invalid_argument("rows_query must return 2 columns (unit, key) or 3 (unit, key, value), but returns " +
                                std::to_string(columns));
  if (!ends_with_order_by_1(query))
    throw std::invalid_argument("rows_query must end with ORDER BY 1 (its unit column), so that each unit's rows "
                                "arrive together");
  // In analyst mode, who each row belongs to is the owner's declaration: the
  // program SQLite prepared must attribute every row to the unit of the
  // private row it comes from (units.hpp), or the query is refused here,
  // before the charge. Outside analyst mode the query defines the unit.
  if (conn.has_analyst_mode()) {
    try {
      check_units(guarded, query, conn.analyst_mode().units);
    } catch (const std::invalid_argument& e) {
      conn.analyst_mode().last_refusal = std::string(kName) + ": " + e.what();
      throw;
    }
  }
  const bool has_value = columns == 3;
  const GroupedPlan plan(epsilon, options, has_value, private_keys);
  Stmt ks;
  if (!private_keys) {
    // Keys must be public: in analyst mode, keys_query may not read a private table.
    ks = conn.has_analyst_mode() ? guarded.prepare(keys_query, "keys_query", reads_public_only, &conn.analyst_mode())
                                 : guarded.prepare(keys_query, "keys_query");
    if (sqlite3_column_count(ks.get()) != 1)
      throw std::invalid_argument("keys_query must return 1 column, but returns " +
                                  std::to_string(sqlite3_column_count(ks.get())));
  }
  // Memory fixed by the parameters, before the charge.
  GroupedAccumulator acc(plan);
  Rng& rng = conn.rng();
  const KeyPriority priority(rng);

  // The charge, before the first row.
  // (noise=gaussian: the rho that (epsilon, delta) converts to, composed in zCDP.)
  const std::optional<std::int64_t> entry =
      plan.gaussian() ? conn.charge_gaussian(kName, plan.rho()) : conn.charge(kName, epsilon, plan.delta());

  std::vector<ReleasedRows::Row> out;
  try {
    KeyIndex index;
    std::vector<Key>& keys = index.keys();
    sqlite3* gdb = guarded.db();
    if (!private_keys) {
      int rc;
      while ((rc = sqlite3_step(ks.get())) == SQLITE_ROW) {
        const KeyView k = key_of(sqlite3_column_value(ks.get(), 0));
        if (index.find(k) == KeyIndex::kNone) index.insert(k);
      }
      if (rc != SQLITE_DONE) throw std::runtime_error(sqlite3_errmsg(gdb));
      ks.reset();
      acc.reserve_keys(keys.size());
    }

    // Stream the rows unit by unit.
    bool in_unit = false;
    std::int64_t unit = 0;
    int rc;
    sqlite3_stmt* s = rows.get();
    KeyPriority::OfUnit of_unit = priority.of_unit(0);  // the current unit's
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
      sqlite3_value* u = sqlite3_column_value(s, 0);
      if (sqlite3_value_type(u) != SQLITE_INTEGER) continue;
      const std::int64_t id = sqlite3_value_int64(u);
      if (!in_unit || id != unit) {
        // ORDER BY 1 sorts INTEGERs by value whatever the column's collation,
        // so units arrive in order; were one to come back, it would be a new
        // unit here (the bound holds per arrival, never per id).
        if (in_unit) acc.end_unit();
        of_unit = priority.of_unit(id);
      }
      in_unit = true;
      unit = id;
      std::int64_t q = 0, b = 0, z = 0;
      if (has_value) {
        sqlite3_value* x = sqlite3_column_value(s, 2);
        if (sqlite3_value_type(x) == SQLITE_NULL) continue;  // as avg() skips NULLs
        const double v = row_value(x, sqlite3_value_type(x));
        q = plan.quantize(v);
        b = plan.bucket(v);
        z = plan.square(v);
      }
      const KeyView k = key_of(sqlite3_column_value(s, 1));
      std::uint32_t idx = index.find(k);
      if (idx == KeyIndex::kNone) {
        if (!private_keys) continue;  // not a public key: dropped
        idx = index.insert(k);
        acc.reserve_keys(keys.size());
      }
      const auto type = static_cast<unsigned char>(k.type);
      acc.add(idx, is_number(k) ? of_unit.number(type, number_bits(k)) : of_unit(type, identity(k)), q, b, z, rng);
    }
    if (rc != SQLITE_DONE) throw std::runtime_error(sqlite3_errmsg(gdb));
    // SQLite prepares a statement again when the schema changed since (here:
    // another connection changed it between the refresh and the run): the
    // program that ran would not be the one checked. Whether it happened
    // depends on the schema, never on the rows.
    if (conn.has_analyst_mode() && sqlite3_stmt_status(s, SQLITE_STMTSTATUS_REPREPARE, 0) != 0)
      throw std::runtime_error("schema changed");
    rows.reset();
    if (in_unit) acc.end_unit();
    acc.reserve_keys(keys.size());

    // Release in key order (never in the order the data met them).
    std::vector<std::uint32_t> order(keys.size());
    for (std::uint32_t k = 0; k < order.size(); ++k) order[k] = k;
    std::sort(order.begin(), order.end(),
              [&](std::uint32_t a, std::uint32_t b) { return key_less(keys[a], keys[b]); });
    for (const std::uint32_t k : order)
      if (auto r = release_key(plan, acc, k, rng))
        out.push_back({std::move(keys[k]), *r, mean_interval(plan, *r, options.confidence)});
  } catch (...) {
    throw std::runtime_error(
        "reading the rows failed after the release was charged (an I/O error, an interrupt, or memory; the message "
        "of the cause is not shown: it could depend on the rows)");
  }
  conn.record_released_keys(entry, static_cast<std::int64_t>(out.size()));
  return std::make_unique<ReleasedRows>(
      std::move(out), has_value,
      ReleasedRows::Widths{plan.count_half_width(options.confidence), plan.sum_half_width(options.confidence)});
}

}  // namespace

// count_halfwidth, sum_halfwidth, mean_low, mean_high: the exact intervals of
// the noise at the option confidence (docs/intervals.md), after the values;
// quantile: each key's quantile with option quantile=q, else NULL; variance,
// stddev: with option variance=on, else NULL.
const TableFunction kPrivateGroups{kName,
                                   "key, count INTEGER, sum REAL, mean REAL, count_halfwidth INTEGER, "
                                   "sum_halfwidth REAL, mean_low REAL, mean_high REAL, quantile REAL, "
                                   "variance REAL, stddev REAL",
                                   11,
                                   {"rows_query", "epsilon", "options", "keys_query"}, 2, open_private_groups,
                                   /*random=*/true, /*release=*/true};

}  // namespace optdp::sql
