// The proof that an aggregate's parameters are literals (sqlite/constant_args.hpp,
// params_are_literals), on which the aggregates stop re-reading their
// parameters once a group has compared Connection::proof_after_rows() rows
// (sqlite/params.hpp): what counts as a literal, which calls are found (quoted
// function names too), which SQL texts are searched (running statements,
// views, triggers, attached schemas), and how a large schema raises the
// number of rows before the question is asked.
// Linked against optdp_static, so the functions are registered with
// sqlite3_optdp_init and the proof is called directly while a statement runs.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>

#include "sqlite/connection.hpp"
#include "sqlite/constant_args.hpp"

extern "C" int sqlite3_optdp_init(sqlite3* db, char** err, const sqlite3_api_routines* api);

namespace {

using optdp::sql::find_calls;
using optdp::sql::is_literal_argument;
using optdp::sql::params_are_literals;

TEST(IsLiteralArgument, LiteralsAndBoundParameters) {
  for (const char* a : {"0.5", " 0.5 ", "-0.5", "+1", "1e-3", "1E+300", ".5", "5.", "0x1F", "-0xff", "(0.5)",
                        "( ( -2 ) )", "'l1'", "'gamma=0.5'", "'it''s'", "''", "?", "?12", ":eps", "@eps", "$eps",
                        "12345678901234567890"}) {
    EXPECT_TRUE(is_literal_argument(a)) << a;
  }
}

TEST(IsLiteralArgument, AnythingElseIsNot) {
  for (const char* a : {"", " ", "x", "t.x", "alpha", "0.5 + 0", "-(0.5)", "--0.5", "- 0.5", "+-1", "1e", "1e+",
                        ".", "0x", "0xg", "'a' || 'b'", "'unterminated", "'", "'a''", "(1) + (2)", "(0.5",
                        "0.5)", "?x", ":", "$a::b", "abs(-0.5)", "NULL", "TRUE", "CURRENT_TIME", "random()",
                        "(SELECT 0.5)", "0.5 /* c */", "/* c */ 0.5", "CAST(0.5 AS REAL)", "x'00'", "1_000",
                        "Inf", "0.5 COLLATE nocase"}) {
    EXPECT_FALSE(is_literal_argument(a)) << a;
  }
}

TEST(FindCalls, QuotedFunctionNamesAreCalls) {
  // SQLite accepts "f"(...), `f`(...) and [f](...) as calls of f.
  const auto calls = find_calls(
      "SELECT private_count(0.5), \"private_count\"(a), `PRIVATE_COUNT` (b), [private_count](c), "
      "'private_count'(d), \"private\"\"count\"(e), t.private_count(f), private_countx(g) FROM t",
      "private_count");
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(calls[0][0], "0.5");
  EXPECT_EQ(calls[1][0], "a");
  EXPECT_EQ(calls[2][0], "b");
  EXPECT_EQ(calls[3][0], "c");
}

class Proof : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(sqlite3_open(":memory:", &db_), SQLITE_OK);
    char* err = nullptr;
    ASSERT_EQ(sqlite3_optdp_init(db_, &err, nullptr), SQLITE_OK) << (err ? err : "");
    exec("CREATE TABLE t(g, x, a); INSERT INTO t VALUES (1, 2, 0.5), (1, 3, 0.5), (2, 4, 0.5)");
  }
  void TearDown() override {
    sqlite3_finalize(running_);
    EXPECT_EQ(sqlite3_close(db_), SQLITE_OK);
  }
  void exec(const std::string& sql) {
    char* err = nullptr;
    ASSERT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "") << "\n" << sql;
  }
  // Prepares sql, binds 0.25 i to parameter i, and steps it once: it is then
  // a running (busy) statement, as when an aggregate's step asks the question.
  void run(const std::string& sql) {
    sqlite3_finalize(running_);
    running_ = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &running_, nullptr), SQLITE_OK) << sqlite3_errmsg(db_);
    for (int i = 1; i <= sqlite3_bind_parameter_count(running_); ++i) sqlite3_bind_double(running_, i, 0.25 * i);
    ASSERT_EQ(sqlite3_step(running_), SQLITE_ROW) << sqlite3_errmsg(db_);
    ASSERT_TRUE(sqlite3_stmt_busy(running_));
  }
  bool count_literal(int nargs = 1) { return params_are_literals(db_, "private_count", nargs, nargs - 1); }

  sqlite3* db_ = nullptr;
  sqlite3_stmt* running_ = nullptr;
};

TEST_F(Proof, LiteralInTheRunningStatement) {
  run("SELECT private_count(0.5) FROM t");
  EXPECT_TRUE(count_literal());
  EXPECT_FALSE(count_literal(2)) << "no call with 2 arguments";
  EXPECT_FALSE(params_are_literals(db_, "staircase_sum", 4, 1)) << "no call at all";
}

TEST_F(Proof, BoundParametersAreLiterals) {
  run("SELECT private_count(?) FROM t");
  EXPECT_TRUE(count_literal());
  run("SELECT private_count(x, :alpha) FROM t");
  EXPECT_TRUE(count_literal(2));
  run("SELECT staircase_sum(x, ?1, ?2, ?3, 'l2') FROM t");
  EXPECT_TRUE(params_are_literals(db_, "staircase_sum", 5, 1));
}

TEST_F(Proof, OnlyTheParametersNeedToBeLiterals) {
  run("SELECT private_count(x + 1, 0.5), staircase_sum(abs(x), 1.0, 0, 10) FROM t");
  EXPECT_TRUE(count_literal(2));
  EXPECT_TRUE(params_are_literals(db_, "staircase_sum", 4, 1));
  EXPECT_FALSE(params_are_literals(db_, "staircase_sum", 4, 0)) << "x itself is no literal";
}

TEST_F(Proof, AColumnOrExpressionIsNot) {
  for (const char* sql : {"SELECT private_count(a) FROM t", "SELECT private_count(a * 1) FROM t",
                          "SELECT private_count(0.5 + 0) FROM t", "SELECT private_count((SELECT 0.5)) FROM t",
                          "SELECT private_count(CASE WHEN x > 100 THEN 0.25 ELSE 0.5 END) FROM t"}) {
    run(sql);
    EXPECT_FALSE(count_literal()) << sql;
  }
}

TEST_F(Proof, EveryCallMustBeLiteral) {
  run("SELECT private_count(0.5), (SELECT private_count(a) FROM t) FROM t");
  EXPECT_FALSE(count_literal());
  run("SELECT private_count(0.5), \"Private_Count\"(a) FROM t");
  EXPECT_FALSE(count_literal()) << "a quoted function name is a call too";
}

TEST_F(Proof, AnotherRunningStatementCounts) {
  sqlite3_stmt* other = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db_, "SELECT g, private_count(a) FROM t GROUP BY g", -1, &other, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(other), SQLITE_ROW);
  run("SELECT private_count(0.5) FROM t");
  EXPECT_FALSE(count_literal());
  sqlite3_finalize(other);
  EXPECT_TRUE(count_literal()) << "once the other statement is gone";
}

TEST_F(Proof, ViewsAndTriggersInEverySchema) {
  exec("CREATE VIEW v AS SELECT private_count(a) AS n FROM t");
  run("SELECT private_count(0.5) FROM t");
  EXPECT_FALSE(count_literal()) << "a view's call runs under a statement whose text does not show it";
  exec("DROP VIEW v; CREATE TEMP TRIGGER tr AFTER INSERT ON t BEGIN SELECT private_count(new.a) FROM t; END");
  EXPECT_FALSE(count_literal()) << "temp trigger";
  exec("DROP TRIGGER tr; ATTACH ':memory:' AS aux; CREATE TABLE aux.u(a); "
       "CREATE VIEW aux.w AS SELECT private_count(a) FROM aux.u");
  EXPECT_FALSE(count_literal()) << "view of an attached schema";
  exec("DROP VIEW aux.w; CREATE VIEW aux.w AS SELECT private_count(0.25) FROM aux.u");
  EXPECT_TRUE(count_literal()) << "literal calls everywhere";
}

TEST_F(Proof, LargeSchemasAskLater) {
  optdp::sql::Connection* conn = optdp::sql::Connection::for_db(db_);
  const std::string statement = "SELECT private_count(0.5) FROM t";
  run(statement);
  std::size_t bytes = 0;
  EXPECT_TRUE(params_are_literals(db_, "private_count", 1, 0, &bytes));
  EXPECT_EQ(bytes, statement.size());
  EXPECT_TRUE(conn->params_are_literals("private_count", 1, 0));
  EXPECT_EQ(conn->proof_after_rows(), optdp::sql::Connection::kProveConstantAfterRows) << "a small schema";
  // 100 views of about 1 KB: the proof reads ~100 KB, so the next groups ask
  // only after 10 rows per byte, ~1M rows.
  std::string body = "SELECT x";
  for (int i = 0; i < 250; ++i) body += " + x";
  for (int v = 0; v < 100; ++v) exec("CREATE VIEW v" + std::to_string(v) + " AS " + body + " AS y FROM t");
  run(statement);
  EXPECT_TRUE(params_are_literals(db_, "private_count", 1, 0, &bytes));
  std::size_t views = 0;
  {
    sqlite3_stmt* q = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db_, "SELECT sum(length(sql)) FROM sqlite_schema WHERE type IN ('view', 'trigger')",
                                 -1, &q, nullptr), SQLITE_OK);
    ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
    views = static_cast<std::size_t>(sqlite3_column_int64(q, 0));
    sqlite3_finalize(q);
  }
  EXPECT_GT(views, 100000u);
  EXPECT_EQ(bytes, statement.size() + views);
  EXPECT_TRUE(conn->params_are_literals("private_count", 1, 0));
  EXPECT_EQ(conn->proof_after_rows(), optdp::sql::Connection::kProofRowsPerByte * bytes);
  optdp::sql::Connection::release(conn);
}

// Each aggregate asks once its group has compared 65,536 rows (65,537 rows
// with the first), not before. Seen through the connection's threshold, which
// only a question changes: with 100 views of ~1 KB it jumps to ~1M rows.
TEST(ProofPoint, EveryAggregateAsksAfter65536ComparedRows) {
  const char* queries[] = {"SELECT private_count(0.5) FROM big", "SELECT private_count(x, 0.5) FROM big",
                           "SELECT staircase_sum(x, 1.0, 10) FROM big", "SELECT laplace_sum(x, 1.0, 0, 10) FROM big",
                           "SELECT staircase_sum(x, 1.0, 0, 10, 'l2') FROM big",
                           "SELECT private_count_levels(0.1, 0.5) FROM big",
                           "SELECT private_count_levels_of(x, 0.5) FROM big"};
  for (const char* query : queries) {
    for (int rows : {65536, 65537}) {
      sqlite3* db = nullptr;
      ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
      char* err = nullptr;
      ASSERT_EQ(sqlite3_optdp_init(db, &err, nullptr), SQLITE_OK);
      std::string setup = "CREATE TABLE big(x); WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < " +
                          std::to_string(rows) + ") INSERT INTO big SELECT i FROM c;";
      std::string body = "SELECT x";
      for (int i = 0; i < 250; ++i) body += " + x";
      for (int v = 0; v < 100; ++v) setup += "CREATE VIEW v" + std::to_string(v) + " AS " + body + " AS y FROM big;";
      ASSERT_EQ(sqlite3_exec(db, setup.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
      ASSERT_EQ(sqlite3_exec(db, query, nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "") << query;
      optdp::sql::Connection* conn = optdp::sql::Connection::for_db(db);
      if (rows == 65536)
        EXPECT_EQ(conn->proof_after_rows(), optdp::sql::Connection::kProveConstantAfterRows) << query << ": asked early";
      else
        EXPECT_GT(conn->proof_after_rows(), 1000000u) << query << ": did not ask";
      optdp::sql::Connection::release(conn);
      EXPECT_EQ(sqlite3_close(db), SQLITE_OK);
    }
  }
}

TEST_F(Proof, NothingRunningIsNoProof) {
  EXPECT_FALSE(count_literal());
}

}  // namespace
