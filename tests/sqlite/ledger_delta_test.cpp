// The ledger's (epsilon, delta) account through the Ledger class itself
// (sqlite/ledger.hpp), linked statically: no SQL function
// charges delta yet, so this is where delta charging is tested. Covers the
// recorded totals, the charging rule (a charge adds both and is refused if
// either total would be exceeded), exact arithmetic over many tiny deltas,
// reopening with another total_delta, ledger files written before the delta
// account, and processes' worth of connections racing on one file.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/accounting.hpp"
#include "core/budget.hpp"
#include "core/ledger_rule.hpp"
#include "sqlite/entry.hpp"
#include "sqlite/ledger.hpp"

using optdp::DeltaUnits;
using optdp::sql::Ledger;

namespace {

constexpr auto kFull = Ledger::Durability::Full;
constexpr auto kNormal = Ledger::Durability::Normal;

class LedgerDelta : public testing::Test {
 protected:
  void SetUp() override {
    // Every sqlite3_* call here and in the Ledger goes through the routine
    // table (sqlite/api.hpp), which a registration would set: set it first.
    ASSERT_TRUE(optdp::sql::use_routines(optdp::sql::linked_routines()));
    char tmpl[] = "/tmp/optdp-ledger-delta-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/budget.ledger";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // One column of one row of the ledger file, read without optdp, as text.
  std::optional<std::string> read(const std::string& sql) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    std::optional<std::string> out;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
      out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
  }
  void exec(const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr), SQLITE_OK);
    char* err = nullptr;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
    EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "");
    sqlite3_free(err);
    sqlite3_close(db);
  }
  DeltaUnits units(const std::string& sql) {
    const auto t = read(sql);
    EXPECT_TRUE(t.has_value()) << sql;
    const auto u = optdp::parse_delta_units(t.value_or(""));
    EXPECT_TRUE(u.has_value()) << *t;
    return u.value_or(0);
  }
  DeltaUnits sum_of_charges() {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, "SELECT delta_units FROM optdp_charges", -1, &st, nullptr), SQLITE_OK);
    DeltaUnits sum = 0;
    while (sqlite3_step(st) == SQLITE_ROW)
      sum += optdp::parse_delta_units(reinterpret_cast<const char*>(sqlite3_column_text(st, 0))).value();
    sqlite3_finalize(st);
    sqlite3_close(db);
    return sum;
  }
  std::string quoted() const { return "'" + path_ + "'"; }

  std::string dir_, path_;
};

// The message of f's exception, up to the zCDP accounting's part (a refusal
// of a ledger with a delta budget says why basic composition refuses, then
// "; nor does zCDP fit: ...", checked in ZcdpIsTriedToo).
std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    const std::string m = e.what();
    return m.substr(0, m.find("; nor does zCDP fit: "));
  }
  return "(no error)";
}

TEST_F(LedgerDelta, NewLedgerRecordsBothTotals) {
  Ledger l(path_, 2.5, 1e-5, kFull);
  EXPECT_EQ(l.total(), 2.5);
  EXPECT_EQ(l.total_delta(), 1e-5);
  EXPECT_EQ(l.remaining(), 2.5);
  EXPECT_EQ(l.spent(), 0.0);
  EXPECT_EQ(l.delta_remaining(), 1e-5);
  EXPECT_EQ(l.delta_spent(), 0.0);
  EXPECT_EQ(read("SELECT total_delta FROM optdp_budget"), "1.0e-05");
  EXPECT_EQ(units("SELECT total_delta_units FROM optdp_budget"), optdp::delta_total_units(1e-5));
  EXPECT_EQ(units("SELECT spent_delta_units FROM optdp_budget"), DeltaUnits{0});
  EXPECT_TRUE(l.entries().empty());
}

TEST_F(LedgerDelta, AChargeAddsBoth) {
  Ledger l(path_, 1.0, 1e-5, kFull);
  l.charge("f", 0.5, 1e-6, "SELECT f()");
  l.charge("g", 0.25, 0, nullptr, 7);
  EXPECT_EQ(l.spent(), 0.75);
  EXPECT_EQ(l.remaining(), 0.25);
  EXPECT_EQ(l.delta_spent(), 1e-6);
  EXPECT_EQ(l.delta_remaining(), 1e-5 - 1e-6);  // exact units, correctly rounded like the subtraction
  const auto e = l.entries();
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].function, "f");
  EXPECT_EQ(e[0].epsilon, 0.5);
  EXPECT_EQ(e[0].delta, 1e-6);
  EXPECT_FALSE(e[0].released_keys.has_value());
  EXPECT_EQ(e[0].sql, "SELECT f()");
  EXPECT_EQ(e[0].pid, static_cast<std::int64_t>(getpid()));
  EXPECT_EQ(e[1].delta, 0.0);
  EXPECT_EQ(e[1].released_keys, 7);
  EXPECT_FALSE(e[1].sql.has_value());
  EXPECT_EQ(units("SELECT spent_delta_units FROM optdp_budget"), optdp::delta_charge_units(1e-6));
  EXPECT_EQ(sum_of_charges(), optdp::delta_charge_units(1e-6));
  EXPECT_EQ(read("SELECT spent_units FROM optdp_budget"), "750000000000");
}

TEST_F(LedgerDelta, TheTotalPaysExactlyOneReleaseAtTheSameDelta) {
  // 1e-5 is not a multiple of 10^-18 (decimal units would round the charge up
  // and the total down and refuse it); it is a multiple of 2^-120.
  Ledger l(path_, 1.0, 1e-5, kFull);
  l.charge("f", 0.5, 1e-5, nullptr);
  EXPECT_EQ(l.delta_spent(), 1e-5);
  EXPECT_EQ(l.delta_remaining(), 0.0);
  EXPECT_EQ(message_of([&] { l.charge("f", 0.1, 1e-300, nullptr); }),
            "privacy budget exhausted: delta 1e-05 of 1e-05 spent, and this release costs 1e-300");
  l.charge("f", 0.1, 0, nullptr);  // delta 0 still fits
  EXPECT_EQ(l.entries().size(), 2u);
}

TEST_F(LedgerDelta, DeltaExhaustedIsRefusedAndNothingIsRecorded) {
  Ledger l(path_, 1.0, 1e-6, kFull);
  l.charge("f", 0.1, 1e-6, nullptr);
  EXPECT_EQ(message_of([&] { l.charge("f", 0.1, 1e-7, nullptr); }),
            "privacy budget exhausted: delta 1e-06 of 1e-06 spent, and this release costs 1e-07");
  EXPECT_EQ(l.entries().size(), 1u);
  EXPECT_EQ(l.spent(), 0.100000000001);  // 0.1 rounded up to units of 10^-12
  EXPECT_EQ(l.delta_spent(), 1e-6);
  EXPECT_EQ(read("SELECT spent_units FROM optdp_budget"), "100000000001");
}

TEST_F(LedgerDelta, EpsilonIsCheckedFirstWithItsOwnMessage) {
  Ledger l(path_, 1.0, 1e-6, kFull);
  EXPECT_EQ(message_of([&] { l.charge("f", 2.0, 1e-5, nullptr); }),
            "privacy budget exhausted: 0 of 1 spent, and this release costs 2");
  EXPECT_EQ(message_of([&] { l.charge("f", 2.0, 0, nullptr); }),
            "privacy budget exhausted: 0 of 1 spent, and this release costs 2");
  EXPECT_TRUE(l.entries().empty());
}

TEST_F(LedgerDelta, ZeroDeltaBudgetRefusesAnyPositiveDelta) {
  Ledger l(path_, 1.0, 0, kFull);
  EXPECT_EQ(message_of([&] { l.charge("f", 0.1, 1e-12, nullptr); }),
            "privacy budget exhausted: this ledger has no delta budget (give one as dp_ledger_attach(path, total_epsilon, total_delta)), and this release costs delta 1e-12");
  EXPECT_EQ(message_of([&] { l.charge("f", 0.1, std::numeric_limits<double>::denorm_min(), nullptr); }),
            "privacy budget exhausted: this ledger has no delta budget (give one as dp_ledger_attach(path, total_epsilon, total_delta)), and this release costs delta 5e-324");
  l.charge("f", 0.1, 0, nullptr);
  l.charge("f", 0.1, -0.0, nullptr);
  const auto e = l.entries();
  ASSERT_EQ(e.size(), 2u);
  EXPECT_FALSE(std::signbit(e[1].delta));
  EXPECT_EQ(l.delta_spent(), 0.0);
}

TEST_F(LedgerDelta, ManyTinyDeltasNeverExceedTheTotal) {
  Ledger l(path_, 1e6, 1e-5, kNormal);
  int fits = 0;
  for (int i = 0; i < 200; ++i) {
    try {
      l.charge("f", 1e-3, 1e-7, nullptr);
      ++fits;
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(fits, 100);
      // Spent: exactly 100 times the double 1e-7, shown rounded to a double.
      EXPECT_EQ(message_of([&] { throw e; }),
                "privacy budget exhausted: delta 1e-05 of 1e-05 spent, and this release costs 1e-07");
      break;
    }
  }
  // 100 * 1e-7 as doubles (exactly 9.99999999999999954748e-6) fits 1e-5
  // (1.00000000000000008180e-5); 101 would not.
  EXPECT_EQ(fits, 100);
  const DeltaUnits spent = units("SELECT spent_delta_units FROM optdp_budget");
  EXPECT_EQ(spent, optdp::delta_charge_units(1e-7) * 100);
  EXPECT_EQ(spent, sum_of_charges());
  EXPECT_LE(spent, optdp::delta_total_units(1e-5));
  EXPECT_EQ(l.delta_spent(), 100 * 1e-7);
}

TEST_F(LedgerDelta, DeltasBelowOneUnitAreRoundedUp) {
  // A total of 5 units (5 * 2^-120) and charges of 3/16 of a unit: in basic
  // composition's units each costs a whole unit, so 5 fit; the zCDP
  // accounting sums the deltas themselves (rounded up, with a pure part
  // e^-huge at epsilon 1e6) and admits the 26 that exact arithmetic allows,
  // never a 27th (27 * 3/16 > 5).
  Ledger l(path_, 1e6, std::ldexp(5.0, -120), kNormal);
  int fits = 0;
  for (int i = 0; i < 30; ++i) {
    try {
      l.charge("f", 1e-3, std::ldexp(3.0, -124), nullptr);
      ++fits;
    } catch (const std::runtime_error&) {
      break;
    }
  }
  EXPECT_EQ(fits, 26);
  EXPECT_EQ(units("SELECT spent_delta_units FROM optdp_budget"), DeltaUnits{26});  // basic's rounded-up units
}

TEST_F(LedgerDelta, ZcdpIsTriedToo) {
  // Past basic composition's epsilon, zCDP still admits pure releases (each
  // eps^2/2); its refusal says both accountings' figures.
  Ledger l(path_, 1.0, 1e-6, kNormal);
  int fits = 0;
  std::string last;
  for (int i = 0; i < 1000; ++i) {
    try {
      l.charge("f", 0.01, 0, nullptr);
      ++fits;
    } catch (const std::runtime_error& e) {
      last = e.what();
      break;
    }
  }
  EXPECT_GT(fits, 400);  // basic alone: 100; zCDP: rho 5e-5 each, about 486 within (1, 1e-6)
  EXPECT_NE(last.find("; nor does zCDP fit: rho "), std::string::npos) << last;
  EXPECT_EQ(l.entries().size(), static_cast<std::size_t>(fits));
}

TEST_F(LedgerDelta, BadChargesAreRefusedBeforeTheLedgerIsTouched) {
  Ledger l(path_, 1.0, 0.5, kFull);
  for (double bad : {-1e-9, 1.5, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(l.charge("f", 0.1, bad, nullptr), std::invalid_argument);
  }
  EXPECT_EQ(message_of([&] { l.charge("f", 0.1, 0, nullptr, -1); }), "released_keys must be at least 0, but is -1");
  EXPECT_THROW(l.charge("f", 0, 0, nullptr), std::invalid_argument);  // epsilon as before
  EXPECT_TRUE(l.entries().empty());
  EXPECT_EQ(l.delta_spent(), 0.0);
  l.charge("f", 0.1, 1.0 / 4, nullptr, 0);  // released_keys 0 is a count
  EXPECT_EQ(l.entries().at(0).released_keys, 0);
}

TEST_F(LedgerDelta, AnExistingLedgerKeepsItsTotalDelta) {
  {
    Ledger l(path_, 1.0, 1e-5, kFull);
    l.charge("f", 0.5, 2e-6, nullptr);
  }
  EXPECT_EQ(message_of([&] { Ledger(path_, 1.0, 2e-5, kFull); }),
            "the ledger " + quoted() + " records total_delta 1e-05, but 2e-05 was asked for");
  EXPECT_EQ(message_of([&] { Ledger(path_, 1.0, 0, kFull); }),
            "the ledger " + quoted() + " records total_delta 1e-05, but 0 was asked for");
  // total_epsilon is checked first, with its message unchanged.
  EXPECT_EQ(message_of([&] { Ledger(path_, 2.0, 0, kFull); }),
            "the ledger " + quoted() + " records total_epsilon 1, but 2 was asked for");
  EXPECT_EQ(message_of([&] { Ledger(path_, 1.0, 1.0, kFull); }), "total_delta must be a number in [0, 1), but is 1");
  Ledger again(path_, 1.0, 1e-5, kNormal);
  EXPECT_EQ(again.delta_spent(), 2e-6);
  EXPECT_EQ(again.spent(), 0.5);
}

// The schema of ledger files written before the delta account (ledger.cpp at
// the commit before it), with a charge recorded the way that code recorded it.
void write_old_ledger(const std::string& path) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  const char* sql =
      "PRAGMA journal_mode=WAL;"
      "CREATE TABLE IF NOT EXISTS optdp_budget("
      "  id INTEGER PRIMARY KEY CHECK (id = 1),"
      "  total_epsilon REAL NOT NULL,"
      "  total_units INTEGER NOT NULL,"
      "  spent_units INTEGER NOT NULL DEFAULT 0,"
      "  created TEXT NOT NULL);"
      "CREATE TABLE IF NOT EXISTS optdp_charges("
      "  id INTEGER PRIMARY KEY,"
      "  time TEXT NOT NULL,"
      "  function TEXT NOT NULL,"
      "  epsilon REAL NOT NULL,"
      "  units INTEGER NOT NULL,"
      "  sql TEXT,"
      "  pid INTEGER NOT NULL);"
      "INSERT INTO optdp_budget(id, total_epsilon, total_units, created) VALUES (1, 3.0, 3000000000000, "
      "  '2024-01-01T00:00:00.000Z');"
      "INSERT INTO optdp_charges(time, function, epsilon, units, sql, pid) VALUES "
      "  ('2024-01-01T00:00:01.000Z', 'laplace_sum', 0.1, 100000000001, 'SELECT laplace_sum(x, 0.1, 0, 10) FROM t', 1);"
      "UPDATE optdp_budget SET spent_units = spent_units + 100000000001 WHERE id = 1;";
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

TEST_F(LedgerDelta, OldLedgerFilesOpenWithDeltaZero) {
  write_old_ledger(path_);
  EXPECT_EQ(message_of([&] { Ledger(path_, 3.0, 1e-5, kFull); }),
            "the ledger " + quoted() + " records total_delta 0, but 1e-05 was asked for");
  Ledger l(path_, 3.0, 0, kFull);
  EXPECT_EQ(l.spent(), 0.100000000001);
  EXPECT_EQ(l.delta_spent(), 0.0);
  EXPECT_EQ(l.delta_remaining(), 0.0);
  auto e = l.entries();
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].function, "laplace_sum");
  EXPECT_EQ(e[0].delta, 0.0);
  EXPECT_FALSE(e[0].released_keys.has_value());
  EXPECT_EQ(e[0].pid, 1);
  // Migrated: the new columns exist, with the defaults.
  EXPECT_EQ(read("SELECT total_delta || '|' || total_delta_units || '|' || spent_delta_units FROM optdp_budget"),
            "0.0|0|0");
  EXPECT_EQ(read("SELECT delta || '|' || delta_units || '|' || quote(released_keys) FROM optdp_charges"), "0.0|0|NULL");
  l.charge("private_count", 0.5, 0, "SELECT private_count(0.5) FROM t");
  EXPECT_EQ(units("SELECT spent_delta_units FROM optdp_budget"), DeltaUnits{0});
  EXPECT_EQ(read("SELECT spent_units FROM optdp_budget"), "600000000001");
  EXPECT_EQ(message_of([&] { l.charge("f", 0.1, 1e-9, nullptr); }),
            "privacy budget exhausted: this ledger has no delta budget (give one as dp_ledger_attach(path, total_epsilon, total_delta)), and this release costs delta 1e-09");
  // An older optdp, which names its columns, can still charge the migrated file.
  exec("BEGIN IMMEDIATE;"
       "INSERT INTO optdp_charges(time, function, epsilon, units, sql, pid) VALUES "
       "  ('2024-01-01T00:00:02.000Z', 'private_count', 0.25, 250000000000, NULL, 2);"
       "UPDATE optdp_budget SET spent_units = spent_units + 250000000000 WHERE id = 1; COMMIT;");
  e = l.entries();
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[2].delta, 0.0);
  EXPECT_EQ(l.spent(), 0.850000000001);
  // Opening it again does not migrate twice.
  Ledger again(path_, 3.0, 0, kNormal);
  EXPECT_EQ(again.entries().size(), 3u);
}

TEST_F(LedgerDelta, AnAlteredCountIsRefused) {
  {
    Ledger l(path_, 1.0, 1e-5, kFull);
    l.charge("f", 0.1, 1e-6, nullptr);
  }
  exec("UPDATE optdp_budget SET spent_delta_units = '12x'");
  Ledger l(path_, 1.0, 1e-5, kFull);
  const std::string why = "the ledger " + quoted() + " cannot be read: spent_delta_units is not a count of delta units";
  EXPECT_EQ(message_of([&] { l.charge("f", 0.1, 0, nullptr); }), why);
  EXPECT_EQ(message_of([&] { l.delta_spent(); }), why);
  EXPECT_EQ(l.entries().size(), 1u);
}

TEST_F(LedgerDelta, ConnectionsRacingNeverExceedTheTotal) {
  { Ledger create(path_, 1e6, 1e-5, kNormal); }
  constexpr int kThreads = 4;
  std::atomic<int> charged{0}, refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      Ledger l(path_, 1e6, 1e-5, kNormal);  // its own connection
      for (;;) {
        try {
          l.charge("f", 1e-3, 3e-7, nullptr);
          ++charged;
        } catch (const std::runtime_error&) {
          ++refused;
          return;
        }
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(charged.load(), 33);  // 33 * 3e-7 <= 1e-5 < 34 * 3e-7 in exact arithmetic on the doubles
  EXPECT_EQ(refused.load(), kThreads);
  EXPECT_EQ(units("SELECT spent_delta_units FROM optdp_budget"), optdp::delta_charge_units(3e-7) * 33);
  EXPECT_EQ(sum_of_charges(), optdp::delta_charge_units(3e-7) * 33);
  EXPECT_EQ(read("SELECT count(*) FROM optdp_charges"), "33");
}

// The summary of the history the ledger keeps (table optdp_summary) is the
// summary of its entries after every charge, and the rule decides on it as
// on the whole history (docs/accounting.md, "What a charge reads").
TEST_F(LedgerDelta, TheKeptSummaryIsTheEntriesAfterEveryCharge) {
  Ledger l(path_, 1.0, 1e-6, kNormal);
  const double rho = optdp::zcdp::rho_of_gaussian(1, 2500);
  // The rule on the whole history, as a reference.
  optdp::LedgerAccount account;
  account.total_epsilon = 1.0;
  account.total_delta = 1e-6;
  account.total_units = optdp::total_units(1.0);
  account.total_delta_units = optdp::delta_total_units(1e-6);
  std::vector<optdp::zcdp::Entry> entries;
  int charged = 0, refused = 0;
  for (int i = 0; i < 200 && refused < 3; ++i) {
    // Gaussian counts with their shift, Laplace sums, partition selections, in turn.
    const int kind = i % 5 < 3 ? 0 : i % 5 == 3 ? 1 : 2;
    const double eps = kind == 1 ? 0.02 : kind == 2 ? 0.05 : 0;
    const double delta = kind == 2 ? 1e-9 : 0;
    const double r = kind == 0 ? rho : 0;
    const std::int64_t shift = kind == 0 ? 1 : 0;
    const auto c = optdp::ledger_charge(eps, delta, r, shift);
    const bool fits = optdp::ledger_refusal(account, entries, c, "attach").empty();
    bool accepted = true;
    try {
      l.charge("f", eps, delta, nullptr, std::nullopt, r, shift);
    } catch (const std::runtime_error&) {
      accepted = false;
    }
    ASSERT_EQ(accepted, fits) << i;
    if (!accepted) {
      ++refused;
      continue;
    }
    ++charged;
    account.spent_units += c.units;
    account.spent_delta_units += c.delta_units;
    entries.push_back(optdp::ledger_entry(eps, delta, r, shift));
    const auto kept = read("SELECT summary FROM optdp_summary");
    ASSERT_TRUE(kept);
    const auto h = optdp::decode_history(*kept, std::stoll(*read("SELECT max(id) FROM optdp_charges")));
    ASSERT_TRUE(h) << *kept;
    ASSERT_TRUE(*h == optdp::zcdp::History::of(entries)) << i;
    ASSERT_TRUE(l.history() == optdp::zcdp::History::of(entries));
  }
  EXPECT_GT(charged, 50);
  EXPECT_EQ(refused, 3);  // the budget ran out
}

// A kept summary that is not the one written for the entries present — edited
// by hand, emptied, or left stale by entries inserted, deleted or altered
// without optdp (the triggers empty it) — is never trusted: the charge
// summarises the entries again, decides on them, and keeps that summary.
TEST_F(LedgerDelta, AStaleOrAlteredSummaryIsRebuiltNotTrusted) {
  const double rho = optdp::zcdp::rho_of_gaussian(1, 2500);
  auto charge = [&](Ledger& l) {
    try {
      l.charge("f", 0, 0, nullptr, std::nullopt, rho, 1);
      return true;
    } catch (const std::runtime_error&) {
      return false;
    }
  };
  auto kept_is_entries = [&] {
    const auto kept = read("SELECT summary FROM optdp_summary");
    if (!kept) return false;
    const auto h = optdp::decode_history(*kept, std::stoll(*read("SELECT max(id) FROM optdp_charges")));
    return h && h->entries == std::stoull(*read("SELECT count(*) FROM optdp_charges"));
  };
  Ledger l(path_, 1.0, 1e-6, kNormal);
  int n = 0;
  while (charge(l)) ++n;
  ASSERT_GT(n, 50);
  ASSERT_TRUE(kept_is_entries());
  const std::string good = *read("SELECT summary FROM optdp_summary");
  // The summary edited to claim 10 fewer entries (its digest no longer
  // matches): trusted, it would let the next charge pass.
  const std::string g_line = "g ";
  const auto at = good.find(g_line);
  ASSERT_NE(at, std::string::npos);
  const auto count_at = good.rfind(' ', good.find('\n', at)) + 1;
  const auto count_end = good.find('\n', at);
  const int count = std::stoi(good.substr(count_at, count_end - count_at));
  std::string fewer = good;
  fewer.replace(count_at, count_end - count_at, std::to_string(count - 10));
  const auto entries_at = fewer.find("entries ") + 8;
  fewer.replace(entries_at, fewer.find('\n', entries_at) - entries_at, std::to_string(count - 10));
  exec("UPDATE optdp_summary SET summary = '" + fewer + "'");
  EXPECT_FALSE(charge(l));
  EXPECT_EQ(*read("SELECT summary FROM optdp_summary"), good);  // rebuilt, and kept
  // Emptied.
  exec("DELETE FROM optdp_summary");
  EXPECT_FALSE(charge(l));
  EXPECT_EQ(*read("SELECT summary FROM optdp_summary"), good);
  // Ten entries deleted by hand (not the last: the last id stays): the
  // trigger empties the summary, and the ledger finds room for ten more.
  exec("DELETE FROM optdp_charges WHERE id BETWEEN 2 AND 11");
  EXPECT_FALSE(read("SELECT summary FROM optdp_summary"));
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(charge(l)) << i;
  EXPECT_FALSE(charge(l));
  EXPECT_TRUE(kept_is_entries());
  // An entry altered by hand (a quarter of its rho): the summary is emptied,
  // and the charge decides on the altered entries (still no room).
  exec("UPDATE optdp_charges SET rho = rho / 4 WHERE id = 20");
  EXPECT_FALSE(read("SELECT summary FROM optdp_summary"));
  EXPECT_FALSE(charge(l));
  EXPECT_TRUE(kept_is_entries());
  // Ten entries deleted and one inserted by hand into the gap of ids (as an
  // older optdp or a restore might): the last id stays, the trigger empties
  // the summary, and the inserted entry (ten releases' rho, no shift, so no
  // curve) is counted: no room.
  exec("UPDATE optdp_charges SET rho = rho * 4 WHERE id = 20");
  exec("DELETE FROM optdp_charges WHERE id BETWEEN 12 AND 21");
  EXPECT_TRUE(charge(l));  // the summary emptied by the trigger
  exec("INSERT INTO optdp_charges(id, time, function, epsilon, units, pid, rho, shift) "
       "VALUES (13, 'now', 'by hand', 0, 0, 0, " + std::to_string(rho * 10) + ", 0)");
  EXPECT_FALSE(read("SELECT summary FROM optdp_summary"));
  EXPECT_FALSE(charge(l));
  EXPECT_TRUE(kept_is_entries());
  EXPECT_NE(read("SELECT summary FROM optdp_summary")->find("\ng "), std::string::npos);
}

}  // namespace
