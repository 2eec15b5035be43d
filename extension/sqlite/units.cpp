#include "sqlite/units.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "sqlite/api.hpp"
#include "sqlite/guarded.hpp"

namespace optdp::sql {

namespace {

// Programs longer than this are refused (the check's time stays small).
constexpr std::size_t kMaxProgram = 4000;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string text_column(sqlite3_stmt* s, int c) {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s, c));
  return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(s, c))) : std::string();
}

[[noreturn]] void refuse(const std::string& why) { throw std::invalid_argument("rows_query " + why); }

struct Op {
  std::string name;
  int p1 = 0, p2 = 0, p3 = 0;
  std::string p4;
  int p5 = 0;
};

// What a cursor of the program reads.
struct Cursor {
  enum Kind { Public, Private, Pseudo, Sorter } kind = Public;
  std::string table;     // a private cursor's table (lower case)
  int unit_cid = -1;     // its unit column's index (-1: the unit is the rowid)
  std::string family;    // its declaration's family
  int sorter = -1;       // a pseudo cursor's sorter
};

Cursor cursor_of(Cursor::Kind k) {
  Cursor c;
  c.kind = k;
  return c;
}

// The unit a register holds exactly: the unit column of private cursor c at
// its current row, or field j of a pseudo cursor (a sorted row).
struct Exact {
  enum Kind { None, Unit, Field } kind = None;
  int cursor = 0, field = 0;
  bool operator==(const Exact&) const = default;
};

// What a register's value depends on: private cursors at their current row
// (cur) or at an earlier one (stale), and whether it is exactly a unit.
struct Val {
  std::set<int> cur, stale;
  Exact exact;
  bool operator==(const Val&) const = default;
};

Val join_vals(const Val& a, const Val& b) {
  Val v;
  v.cur = a.cur;
  v.cur.insert(b.cur.begin(), b.cur.end());
  v.stale = a.stale;
  v.stale.insert(b.stale.begin(), b.stale.end());
  if (a.exact == b.exact) v.exact = a.exact;
  return v;
}

Val depends(std::initializer_list<const Val*> in) {
  Val v;
  for (const Val* x : in) {
    v.cur.insert(x->cur.begin(), x->cur.end());
    v.stale.insert(x->stale.begin(), x->stale.end());
  }
  return v;
}

// The state before an instruction.
struct State {
  bool reached = false;
  bool moved_private = false;             // a private cursor moved on some path here
  std::map<int, Val> regs;                // registers not here hold nothing private
  std::map<int, std::vector<Val>> records;  // the fields of a record built by MakeRecord
  std::set<std::pair<int, int>> same;     // pairs of private cursors known on rows of one unit (a < b)
  std::map<int, Val> pos;                 // what a public cursor's row depends on (the key it was looked up by)
  bool operator==(const State&) const = default;
};

// Merges b into a (at a point several paths reach); returns whether a changed.
bool merge(State& a, const State& b) {
  if (!b.reached) return false;
  if (!a.reached) {
    a = b;
    return true;
  }
  State m;
  m.reached = true;
  m.moved_private = a.moved_private || b.moved_private;
  for (const auto& [r, v] : a.regs) {
    auto it = b.regs.find(r);
    m.regs[r] = it == b.regs.end() ? join_vals(v, Val{}) : join_vals(v, it->second);
  }
  for (const auto& [r, v] : b.regs)
    if (!a.regs.count(r)) m.regs[r] = join_vals(Val{}, v);
  for (const auto& [c, v] : a.pos) {
    auto it = b.pos.find(c);
    m.pos[c] = it == b.pos.end() ? join_vals(v, Val{}) : join_vals(v, it->second);
  }
  for (const auto& [c, v] : b.pos)
    if (!a.pos.count(c)) m.pos[c] = join_vals(Val{}, v);
  for (const auto& [r, f] : a.records) {
    auto it = b.records.find(r);
    if (it != b.records.end() && it->second == f) m.records[r] = f;
  }
  std::set_intersection(a.same.begin(), a.same.end(), b.same.begin(), b.same.end(),
                        std::inserter(m.same, m.same.begin()));
  if (m == a) return false;
  a = std::move(m);
  return true;
}

// The opcodes a checked program may use, by what they do.
enum class Kind {
  Nop,       // no effect on registers or cursors
  Const,     // p2 := a constant
  Null,      // p2..p3 := NULL
  Copy,      // p2.. := p1.. (p3+1 registers)
  SCopy,     // p2 := p1
  Binary,    // p3 := f(p1, p2)
  Unary,     // p2 := f(p1)
  Cast,      // p1 := f(p1) (drops it)
  Affinity,  // p1..p1+p2-1 := f(each)
  Function,  // p3 := f(p2..)
  Column,
  Rowid,
  MakeRecord,
  Cond1,     // jump to p2 on p1
  Cond2,     // jump to p2 on p1, p3
  Scan,      // Rewind, Last: position p1 at its first row, or jump to p2
  Step,      // Next, Prev: move p1, jump to p2 while rows remain
  Seek,      // SeekRowid, NotExists: position p1 at rowid r[p3], or jump to p2
  Goto,
  Halt,
  SorterInsert,
  SorterData,
  SorterSort,
  SorterNext,
  ResultRow,
  MustBeInt,
  ElseEq,
};

const std::map<std::string, Kind, std::less<>>& opcodes() {
  static const std::map<std::string, Kind, std::less<>> m = {
      {"Init", Kind::Goto}, {"Goto", Kind::Goto}, {"Halt", Kind::Halt}, {"Transaction", Kind::Nop},
      {"TableLock", Kind::Nop}, {"Noop", Kind::Nop}, {"Explain", Kind::Nop}, {"CursorHint", Kind::Nop},
      {"ColumnsUsed", Kind::Nop}, {"OpenRead", Kind::Nop}, {"OpenPseudo", Kind::Nop}, {"SorterOpen", Kind::Nop},
      {"Integer", Kind::Const}, {"Int64", Kind::Const}, {"Real", Kind::Const}, {"String8", Kind::Const},
      {"String", Kind::Const}, {"Blob", Kind::Const}, {"Variable", Kind::Const}, {"Null", Kind::Null},
      {"Copy", Kind::Copy}, {"SCopy", Kind::SCopy}, {"IntCopy", Kind::SCopy},
      {"Add", Kind::Binary}, {"Subtract", Kind::Binary}, {"Multiply", Kind::Binary}, {"Divide", Kind::Binary},
      {"Remainder", Kind::Binary}, {"BitAnd", Kind::Binary}, {"BitOr", Kind::Binary},
      {"ShiftLeft", Kind::Binary}, {"ShiftRight", Kind::Binary}, {"And", Kind::Binary}, {"Or", Kind::Binary},
      {"Not", Kind::Unary}, {"BitNot", Kind::Unary}, {"IsTrue", Kind::Unary},
      {"RealAffinity", Kind::Cast}, {"Cast", Kind::Cast}, {"Affinity", Kind::Affinity},
      {"Function", Kind::Function}, {"PureFunc", Kind::Function},
      {"Column", Kind::Column}, {"Rowid", Kind::Rowid}, {"MakeRecord", Kind::MakeRecord},
      {"If", Kind::Cond1}, {"IfNot", Kind::Cond1}, {"IsNull", Kind::Cond1}, {"NotNull", Kind::Cond1},
      {"Eq", Kind::Cond2}, {"Ne", Kind::Cond2}, {"Lt", Kind::Cond2}, {"Le", Kind::Cond2}, {"Gt", Kind::Cond2},
      {"Ge", Kind::Cond2}, {"ElseEq", Kind::ElseEq},
      {"Rewind", Kind::Scan}, {"Last", Kind::Scan}, {"Next", Kind::Step}, {"Prev", Kind::Step},
      {"SeekRowid", Kind::Seek}, {"NotExists", Kind::Seek},
      {"SorterInsert", Kind::SorterInsert}, {"SorterData", Kind::SorterData}, {"SorterSort", Kind::SorterSort},
      {"SorterNext", Kind::SorterNext}, {"ResultRow", Kind::ResultRow}, {"MustBeInt", Kind::MustBeInt},
  };
  return m;
}

// The number of arguments of a Function instruction, from its P4 ("name(n)").
int function_args(const Op& op) {
  const auto open = op.p4.rfind('('), close = op.p4.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close <= open + 1) return -1;
  try {
    return std::stoi(op.p4.substr(open + 1, close - open - 1));
  } catch (...) {
    return -1;
  }
}

class Checker {
 public:
  Checker(std::vector<Op> ops, std::map<int, Cursor> cursors, std::map<int, std::string> names)
      : ops_(std::move(ops)), cursors_(std::move(cursors)), names_(std::move(names)) {
    for (const auto& [c, k] : cursors_)
      if (k.kind == Cursor::Private) privates_.push_back(c);
  }

  void run() {
    for (const Op& op : ops_)
      if (!opcodes().count(op.name))
        refuse("reads a private table and uses " + op.name +
               ", which analyst mode cannot check: with a private table it refuses aggregates, window functions, "
               "subqueries, DISTINCT, LIMIT and OFFSET, compound SELECTs, outer joins and automatic indexes "
               "(docs/boundary.md, \"Who a row belongs to\")");
    // The states before each instruction, to a fixed point.
    states_.assign(ops_.size(), State{});
    states_[0].reached = true;
    std::vector<bool> queued(ops_.size(), false);
    std::vector<std::size_t> work{0};
    queued[0] = true;
    std::size_t rounds = 0;
    while (!work.empty()) {
      if (++rounds > 200 * ops_.size() + 1000) refuse("has a program analyst mode cannot check in time");
      const std::size_t i = work.back();
      work.pop_back();
      queued[i] = false;
      for (const auto& [to, out] : successors(i, states_[i], /*check=*/false)) {
        if (to >= ops_.size()) refuse("has a program analyst mode cannot follow (a jump out of it)");
        if (merge(states_[to], out) && !queued[to]) {
          queued[to] = true;
          work.push_back(to);
        }
      }
    }
    // The checks, on the fixed point: the sorted rows' inserts first, then the rows emitted.
    for (std::size_t i = 0; i < ops_.size(); ++i)
      if (states_[i].reached && kind(i) != Kind::ResultRow) successors(i, states_[i], /*check=*/true);
    for (std::size_t i = 0; i < ops_.size(); ++i)
      if (states_[i].reached && kind(i) == Kind::ResultRow) successors(i, states_[i], /*check=*/true);
  }

 private:
  Kind kind(std::size_t i) const { return opcodes().find(ops_[i].name)->second; }
  bool is_private(int c) const {
    auto it = cursors_.find(c);
    return it != cursors_.end() && it->second.kind == Cursor::Private;
  }
  const std::string& table_of(int c) const { return cursors_.at(c).table; }

  // Register r, to be written: a record it held (MakeRecord) is gone.
  static Val& reg(State& s, int r) {
    s.records.erase(r);
    return s.regs[r];
  }
  static Val get_pos(const State& s, int c) {
    auto it = s.pos.find(c);
    return it == s.pos.end() ? Val{} : it->second;
  }
  static Val get(const State& s, int r) {
    auto it = s.regs.find(r);
    return it == s.regs.end() ? Val{} : it->second;
  }

  // Cursor c moved: what was read from it is stale, and it is tied to no other cursor.
  void moved(State& s, int c) const {
    if (!is_private(c)) return;
    s.moved_private = true;
    auto stale = [c](Val& v) {
      if (v.cur.erase(c)) v.stale.insert(c);
      if (v.exact.kind == Exact::Unit && v.exact.cursor == c) v.exact = Exact{};
    };
    for (auto& [r, v] : s.regs) stale(v);
    for (auto& [r, v] : s.pos) stale(v);
    for (auto& [r, f] : s.records)
      for (Val& v : f) stale(v);
    for (auto it = s.same.begin(); it != s.same.end();)
      it = (it->first == c || it->second == c) ? s.same.erase(it) : std::next(it);
  }

  void no_stale(const Val& v) const {
    if (!v.stale.empty())
      refuse("lets a value read at another row of private table " + table_of(*v.stale.begin()) +
             " reach or decide an emitted row (a value of one unit must not reach another unit's row)");
  }

  // Whether every private cursor is tied to cursor c (on a row of c's unit) in s.
  void all_tied_to(const State& s, int c) const {
    std::map<int, int> parent;
    for (int p : privates_) parent[p] = p;
    auto find = [&](int x) {
      while (parent[x] != x) x = parent[x] = parent[parent[x]];
      return x;
    };
    for (const auto& [a, b] : s.same) parent[find(a)] = find(b);
    for (int p : privates_)
      if (find(p) != find(c)) {
        if (table_of(p) == table_of(c))
          refuse("reads private table " + table_of(p) + " twice without joining the reads on its unit column (" +
                 names_.at(p) + "), so one row could carry another unit's values");
        refuse("reads private tables " + table_of(c) + " and " + table_of(p) +
               " in one row without joining them on a declared link (a rowid lookup of one by the other's unit column)");
      }
  }

  // The checks of a row emitted with registers [first, first+n) and unit u.
  void emitted(const State& s, const std::vector<Val>& fields) const {
    if (fields.empty() || fields[0].exact.kind != Exact::Unit)
      refuse("must return as its first column the declared unit column of the private table it reads (" +
             declared_units() + ")");
    const int c = fields[0].exact.cursor;
    all_tied_to(s, c);
    for (const Val& v : fields) no_stale(v);
  }

  std::string declared_units() const {
    std::string out;
    std::set<std::string> seen;
    for (int p : privates_)
      if (seen.insert(table_of(p)).second) out += (out.empty() ? "" : ", ") + names_.at(p);
    return out;
  }

  // The states after instruction i on each edge; with check, the checks of i
  // (which the fixed point does not need: a refusal ends the check).
  std::vector<std::pair<std::size_t, State>> successors(std::size_t i, const State& in, bool check) {
    const Op& op = ops_[i];
    State s = in;
    std::vector<std::pair<std::size_t, State>> out;
    auto fall = [&](State st) { out.emplace_back(i + 1, std::move(st)); };
    auto jump = [&](State st) { out.emplace_back(static_cast<std::size_t>(op.p2), std::move(st)); };
    switch (kind(i)) {
      case Kind::Nop: fall(s); break;
      case Kind::Goto: jump(s); break;
      case Kind::Halt: break;
      case Kind::Const: reg(s, op.p2) = Val{}; fall(s); break;
      case Kind::Null:
        for (int r = op.p2; r <= std::max(op.p2, op.p3); ++r) reg(s, r) = Val{};
        fall(s);
        break;
      case Kind::Copy:
        for (int k = 0; k <= op.p3; ++k) reg(s, op.p2 + k) = get(in, op.p1 + k);
        fall(s);
        break;
      case Kind::SCopy: reg(s, op.p2) = get(in, op.p1); fall(s); break;
      case Kind::Binary: {
        const Val a = get(in, op.p1), b = get(in, op.p2);
        reg(s, op.p3) = depends({&a, &b});
        fall(s);
        break;
      }
      case Kind::Unary: {
        const Val a = get(in, op.p1);
        reg(s, op.p2) = depends({&a});
        fall(s);
        break;
      }
      case Kind::Cast: reg(s, op.p1).exact = Exact{}; fall(s); break;
      case Kind::Affinity: fall(s); break;  // an INTEGER unit stays the same INTEGER
      case Kind::Function: {
        const int n = function_args(op);
        if (n < 0) refuse("calls a function analyst mode cannot follow");
        Val v;
        for (int k = 0; k < n; ++k) {
          const Val a = get(in, op.p2 + k);
          v = depends({&v, &a});
        }
        reg(s, op.p3) = v;
        fall(s);
        break;
      }
      case Kind::Column:
      case Kind::Rowid: {
        const int c = op.p1;
        const int dest = kind(i) == Kind::Column ? op.p3 : op.p2;
        Val v;
        auto it = cursors_.find(c);
        if (it == cursors_.end() || it->second.kind == Cursor::Sorter)
          refuse("reads a cursor analyst mode cannot follow");  // rows are read from a sorter through a pseudo cursor
        if (it->second.kind == Cursor::Private) {
          v.cur.insert(c);
          const bool unit = kind(i) == Kind::Rowid ? it->second.unit_cid < 0 : it->second.unit_cid == op.p2;
          if (unit) v.exact = Exact{Exact::Unit, c, 0};
        } else if (it->second.kind == Cursor::Pseudo && kind(i) == Kind::Column) {
          v.exact = Exact{Exact::Field, c, op.p2};
        } else {
          // A public row found by a key depends on what the key depends on.
          const Val p = get_pos(in, c);
          v = depends({&p});
        }
        reg(s, dest) = v;
        fall(s);
        break;
      }
      case Kind::MakeRecord: {
        std::vector<Val> f;
        Val all;
        for (int k = 0; k < op.p2; ++k) {
          f.push_back(get(in, op.p1 + k));
          all = depends({&all, &f.back()});
        }
        reg(s, op.p3) = all;
        s.records[op.p3] = std::move(f);
        fall(s);
        break;
      }
      case Kind::Cond1:
      case Kind::Cond2:
      case Kind::ElseEq:
      case Kind::MustBeInt: {
        if (kind(i) == Kind::MustBeInt && op.p2 == 0) refuse("converts a value to an integer where it can fail");
        if (check) {
          if (kind(i) != Kind::ElseEq) no_stale(get(in, op.p1));
          if (kind(i) == Kind::Cond2) no_stale(get(in, op.p3));
        }
        fall(s);
        jump(s);
        break;
      }
      case Kind::Scan: {
        // The one scan is of a private table: every emitted row then comes
        // from one row of it (the other tables are looked up, at most one
        // row each), so one unit's rows, and the work they cost, are at most
        // its own rows. A public table scanned, private ones looked up in
        // it, could repeat one unit's row once per public row.
        if (check && cursors_.count(op.p1) && cursors_.at(op.p1).kind == Cursor::Public)
          refuse("scans a public table and looks private rows up in it (one unit's row could repeat once per "
                 "public row, and the work with it): scan the private table, and look the public one up by rowid");
        if (check && in.moved_private && cursors_.count(op.p1) &&
            cursors_.at(op.p1).kind != Cursor::Pseudo && cursors_.at(op.p1).kind != Cursor::Sorter)
          refuse("scans a table again for rows of a private table (its work would follow private values): "
                 "scan one table, and look the others up by rowid along a declared link, e.g. FROM visits v "
                 "JOIN patients p ON p.id = v.patient_id");
        moved(s, op.p1);
        s.pos.erase(op.p1);
        fall(s);
        jump(s);
        break;
      }
      case Kind::Step: {
        moved(s, op.p1);
        s.pos.erase(op.p1);
        fall(s);
        jump(s);
        break;
      }
      case Kind::Seek: {
        const Val key = get(in, op.p3);
        if (check) no_stale(key);
        moved(s, op.p1);
        if (!is_private(op.p1)) s.pos[op.p1] = depends({&key});
        jump(s);
        // Found: cursor p1 is at rowid key. When its unit is its rowid and the
        // key is exactly the unit of another private cursor of its family, the
        // two are on rows of one unit.
        if (is_private(op.p1) && cursors_.at(op.p1).unit_cid < 0 && key.exact.kind == Exact::Unit &&
            key.exact.cursor != op.p1 && is_private(key.exact.cursor) &&
            cursors_.at(key.exact.cursor).family == cursors_.at(op.p1).family)
          s.same.insert(std::minmax(op.p1, key.exact.cursor));
        fall(s);
        break;
      }
      case Kind::SorterInsert: {
        if (check && !privates_.empty()) {
          auto it = in.records.find(op.p2);
          if (it == in.records.end()) refuse("sorts rows analyst mode cannot follow");
          const std::vector<Val>& f = it->second;
          {
            for (const Val& v : f) no_stale(v);
            // Every private cursor on a row of one unit; which field is the unit is settled at the output.
            bool any = false;
            for (std::size_t j = 0; j < f.size(); ++j)
              if (f[j].exact.kind == Exact::Unit) {
                if (!any) all_tied_to(in, f[j].exact.cursor);
                any = true;
              }
            auto& units = sorted_units_[op.p1];
            if (units.empty()) units.assign(f.size(), true);
            units.resize(std::min(units.size(), f.size()));
            for (std::size_t j = 0; j < units.size(); ++j) units[j] = units[j] && f[j].exact.kind == Exact::Unit;
            if (!any) units.assign(units.size(), false);
          }
        }
        fall(s);
        break;
      }
      case Kind::SorterData: reg(s, op.p2) = Val{}; fall(s); break;
      case Kind::SorterSort:
      case Kind::SorterNext: fall(s); jump(s); break;
      case Kind::ResultRow: {
        if (check && !privates_.empty()) {
          std::vector<Val> f;
          for (int k = 0; k < op.p2; ++k) f.push_back(get(in, op.p1 + k));
          if (!f.empty() && f[0].exact.kind == Exact::Field) {
            // A sorted row: its first column is field j of the sorter, which
            // must have been a unit at every insert.
            const Cursor& ps = cursors_.at(f[0].exact.cursor);
            auto it = sorted_units_.find(ps.sorter);
            const auto j = static_cast<std::size_t>(f[0].exact.field);
            if (ps.sorter < 0 || it == sorted_units_.end() || j >= it->second.size() || !it->second[j])
              refuse("must return as its first column the declared unit column of the private table it reads (" +
                     declared_units() + ")");
            for (const Val& v : f) {
              no_stale(v);
              if (!v.cur.empty()) refuse("emits a sorted row with a value analyst mode cannot follow");
            }
          } else {
            emitted(in, f);
          }
        }
        fall(s);
        break;
      }
    }
    return out;
  }

  std::vector<Op> ops_;
  std::map<int, Cursor> cursors_;
  std::map<int, std::string> names_;  // a private cursor's "table.unit_column"
  std::vector<int> privates_;
  std::vector<State> states_;
  std::map<int, std::vector<bool>> sorted_units_;  // per sorter cursor: which fields were a unit at every insert
};

}  // namespace

void check_units(GuardedDb& g, std::string_view text, const UnitDecls& decls) {
  if (decls.empty()) return;
  // The program.
  std::vector<Op> ops;
  {
    Stmt e = g.explain(text, "rows_query");
    int rc;
    while ((rc = sqlite3_step(e.get())) == SQLITE_ROW) {
      if (ops.size() >= kMaxProgram) refuse("has a program too long for analyst mode to check");
      Op op;
      op.name = text_column(e.get(), 1);
      op.p1 = sqlite3_column_int(e.get(), 2);
      op.p2 = sqlite3_column_int(e.get(), 3);
      op.p3 = sqlite3_column_int(e.get(), 4);
      op.p4 = text_column(e.get(), 5);
      op.p5 = sqlite3_column_int(e.get(), 6);
      ops.push_back(std::move(op));
    }
    if (rc != SQLITE_DONE) refuse("does not explain (its program cannot be checked)");
  }
  // The schema: what each root page of main is.
  struct Root {
    std::string type, table;
  };
  std::map<int, Root> roots;
  g.schema_query("SELECT type, tbl_name, rootpage FROM main.sqlite_schema WHERE rootpage > 0", nullptr,
                 [&](sqlite3_stmt* s) { roots[sqlite3_column_int(s, 2)] = Root{text_column(s, 0), lower(text_column(s, 1))}; });

  // The cursors.
  std::map<int, Cursor> cursors;
  std::map<int, std::string> names;
  std::map<int, int> sorter_of_reg;  // SorterData's destination register -> sorter cursor
  for (const Op& op : ops)
    if (op.name == "SorterData") sorter_of_reg[op.p2] = op.p1;
  bool reads_private = false;
  for (const Op& op : ops) {
    if (op.name == "SorterOpen") cursors[op.p1] = cursor_of(Cursor::Sorter);
    if (op.name == "OpenPseudo") {
      Cursor c = cursor_of(Cursor::Pseudo);
      auto it = sorter_of_reg.find(op.p2);
      c.sorter = it == sorter_of_reg.end() ? -1 : it->second;
      cursors[op.p1] = c;
    }
    if (op.name != "OpenRead" && op.name != "ReopenIdx" && op.name != "OpenAutoindex" && op.name != "OpenEphemeral" &&
        op.name != "OpenDup")
      continue;
    if (op.name != "OpenRead") {
      cursors[op.p1] = cursor_of(Cursor::Public);
      continue;
    }
    if (op.p3 != 0) {  // temp or another schema: no private table there
      cursors[op.p1] = cursor_of(Cursor::Public);
      continue;
    }
    if (op.p5 & 0x10) refuse("opens a table analyst mode cannot name");  // OPFLAG_P2ISREG
    auto root = roots.find(op.p2);
    if (root == roots.end()) refuse("opens a table analyst mode cannot name");
    auto d = decls.find(root->second.table);
    if (d == decls.end()) {
      cursors[op.p1] = cursor_of(Cursor::Public);
      continue;
    }
    reads_private = true;
    const std::string& table = root->second.table;
    if (root->second.type != "table")
      refuse("reads private table " + table + " through an index, which analyst mode cannot check (write " + table +
             " NOT INDEXED)");
    if (d->second.column.empty())
      refuse("reads private table " + table + ", whose privacy unit the owner has not declared (dp_analyst_mode('" +
             table + "(unit_column)'))");
    // A rowid table's OpenRead has the number of columns as P4; WITHOUT ROWID tables have a key.
    if (op.p4.empty() || op.p4.find_first_not_of("0123456789") != std::string::npos)
      refuse("reads private table " + table + " through a key analyst mode cannot check");
    Cursor c = cursor_of(Cursor::Private);
    c.table = table;
    c.family = d->second.family;
    // The unit column's index, and whether it is the rowid (INTEGER PRIMARY KEY).
    int cid = -1, pks = 0;
    bool integer_pk = false;
    const std::string col = lower(d->second.column);
    g.schema_query("SELECT cid, name, pk, type FROM pragma_table_info(?1, 'main')",
                   [&](sqlite3_stmt* s) { sqlite3_bind_text(s, 1, table.c_str(), -1, SQLITE_TRANSIENT); },
                   [&](sqlite3_stmt* s) {
                     if (sqlite3_column_int(s, 2) > 0) ++pks;
                     if (lower(text_column(s, 1)) == col) {
                       cid = sqlite3_column_int(s, 0);
                       integer_pk = sqlite3_column_int(s, 2) > 0 && lower(text_column(s, 3)) == "integer";
                     }
                   });
    if (cid < 0) refuse("reads private table " + table + ", whose declared unit column " + col + " it does not have");
    c.unit_cid = integer_pk && pks == 1 ? -1 : cid;
    cursors[op.p1] = c;
    names[op.p1] = table + "." + col;
  }
  if (!reads_private) return;
  Checker(std::move(ops), std::move(cursors), std::move(names)).run();
}

}  // namespace optdp::sql
