#include "sqlite/params.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

#include "core/format.hpp"
#include "core/privacy.hpp"
#include "sqlite/args.hpp"
#include "sqlite/release.hpp"

namespace optdp::sql {

namespace {

struct Expanded {
  char* text = nullptr;
  ~Expanded() { sqlite3_free(text); }
};

std::string show(const std::vector<Param>& values, const char* const* names) {
  std::string s;
  for (std::size_t k = 0; k < values.size(); ++k) {
    if (k) s += ", ";
    s += names[k];
    s += ' ';
    s += describe(values[k]);
  }
  return s;
}

}  // namespace

namespace {

// What read_params' result is a function of: the text of every running
// statement, and its bound values as sqlite3_expanded_sql shows them (which
// cannot change while it runs). A GROUP BY reads the parameters once per
// group; when this is unchanged, the last result is reused.
std::vector<std::string> running_texts(sqlite3* db) {
  std::vector<std::string> texts;
  for (sqlite3_stmt* s = sqlite3_next_stmt(db, nullptr); s; s = sqlite3_next_stmt(db, s)) {
    if (!sqlite3_stmt_busy(s)) continue;
    const char* raw = sqlite3_sql(s);
    if (!raw) continue;
    std::string t(raw);
    if (sqlite3_bind_parameter_count(s) > 0) {
      Expanded e;
      e.text = sqlite3_expanded_sql(s);
      t += '\0';
      t += e.text ? e.text : "";
    }
    texts.push_back(std::move(t));
  }
  return texts;
}

// Checks every call of every release form in the running statements, in
// text order (see read_params), and returns each form's parameters.
std::vector<StatementCache::Found> check_statement(sqlite3* db) {
  const auto forms = release_forms();
  std::vector<std::string> names;
  for (const auto& f : forms)
    if (std::find(names.begin(), names.end(), f.name) == names.end()) names.emplace_back(f.name);
  std::vector<StatementCache::Found> seen;  // the first call of each form
  for (sqlite3_stmt* s = sqlite3_next_stmt(db, nullptr); s; s = sqlite3_next_stmt(db, s)) {
    if (!sqlite3_stmt_busy(s)) continue;
    const char* raw = sqlite3_sql(s);
    if (!raw) continue;
    const std::string_view text(raw);
    const auto tokens = tokenize(text);
    std::optional<std::vector<std::optional<Param>>> bound;
    const BoundValue bound_value = [&](std::size_t k) -> std::optional<Param> {
      if (!bound) {
        Expanded e;
        e.text = sqlite3_expanded_sql(s);
        bound = bound_values(text, tokens, e.text ? std::string_view(e.text) : std::string_view());
      }
      if (!(*bound)[k])
        throw std::invalid_argument("the value bound to " +
                                    std::string(text.substr(tokens[k].begin, tokens[k].end - tokens[k].begin)) +
                                    " cannot be read back from the statement (sqlite3_expanded_sql)");
      return (*bound)[k];
    };
    std::vector<std::pair<Call, const ReleaseForm*>> calls;
    for (const auto& name : names)
      for (Call& c : find_calls(text, tokens, name))
        for (const auto& f : forms)
          if (f.name == name && f.argc == static_cast<int>(c.args.size())) calls.emplace_back(std::move(c), &f);
    std::sort(calls.begin(), calls.end(),
              [](const auto& x, const auto& y) { return x.first.name_token < y.first.name_token; });
    for (const auto& found : calls) {
      const Call& call = found.first;
      const ReleaseForm* form = found.second;  // not a structured binding: clang 14 cannot capture one
      try {
        std::vector<Param> values;
        for (int a = form->first; a < form->argc; ++a) {
          const auto [b, e] = call.args[static_cast<std::size_t>(a)];
          auto v = read_literal(text, tokens, b, e, bound_value);
          if (!v)
            throw std::invalid_argument(std::string(form->names[a - form->first]) +
                                        " must be a literal or a bound parameter (optdp fixes the noise before it "
                                        "reads any row), but is " +
                                        (b == e ? std::string("empty")
                                                : "the expression " + quote_text(argument_text(text, tokens, b, e), 60)));
          values.push_back(std::move(*v));
        }
        form->check(values);
        auto it = std::find_if(seen.begin(), seen.end(), [&](const StatementCache::Found& x) { return x.form == form; });
        if (it == seen.end()) {
          seen.push_back({form, std::move(values)});
        } else if (it->values != values) {
          throw std::invalid_argument("the running statements call it with different parameters (" +
                                      show(it->values, form->names) + "; " +
                                      show(values, form->names) +
                                      "), and which call is releasing cannot be told: give each its own statement");
        }
      } catch (const CallError&) {
        throw;
      } catch (const std::invalid_argument& e) {
        throw CallError(std::string(form->name) + ": " + e.what());
      }
    }
  }
  return seen;
}

}  // namespace

std::vector<Param> read_params(sqlite3* db, StatementCache& cache, const char* name, int argc) {
  // Every release of an aggregate begins here (with rows or without): none
  // runs under a hard heap limit, where whether its state or the query's
  // work finds memory could depend on the rows (release.hpp).
  refuse_under_heap_limit();
  auto texts = running_texts(db);
  if (texts != cache.texts) cache = StatementCache{std::move(texts), false, {}};
  if (!cache.checked) {
    cache.found = check_statement(db);
    cache.checked = true;
  }
  for (const auto& f : cache.found)
    if (f.form->argc == argc && std::string_view(f.form->name) == name) return f.values;
  throw std::invalid_argument("its parameters cannot be read: no call with " + std::to_string(argc) +
                              (argc == 1 ? " argument" : " arguments") + " is in the text of a running statement");
}

std::string running_sql(sqlite3* db, const char* name) {
  for (sqlite3_stmt* s = sqlite3_next_stmt(db, nullptr); s; s = sqlite3_next_stmt(db, s)) {
    if (!sqlite3_stmt_busy(s)) continue;
    const char* raw = sqlite3_sql(s);
    if (!raw) continue;
    const std::string_view text(raw);
    if (find_calls(text, tokenize(text), name).empty()) continue;
    Expanded e;
    e.text = sqlite3_expanded_sql(s);
    return e.text ? e.text : raw;
  }
  return "";
}

std::string describe(const Param& p) {
  switch (p.type) {
    case Param::Type::Null: return "NULL";
    case Param::Type::Integer: return std::to_string(p.i);
    case Param::Type::Real: {
      std::string s = format_double(p.d);
      if (s.find_first_of(".eEnN") == std::string::npos) s += ".0";  // 1.0 is REAL, 1 is INTEGER
      return s;
    }
    case Param::Type::Text: return "text " + quote_text(p.bytes);
    case Param::Type::Blob: return "a blob of " + std::to_string(p.i) + (p.i == 1 ? " byte" : " bytes");
  }
  return "?";
}

double number_param(const Param& p, const char* name) {
  if (p.type == Param::Type::Real) return p.d;
  if (p.type == Param::Type::Integer) return static_cast<double>(p.i);
  throw std::invalid_argument(std::string(name) + " must be a number, but is " + describe(p));
}

double alpha_param(const Param& p, const char* name) {
  const double a = number_param(p, name);
  if (p.type == Param::Type::Integer || !(a > 0 && a < 1))
    throw std::invalid_argument(std::string(name) + " must be in (0, 1), but is " + describe(p));
  if (p.bound_real) {
    // The bound double is within h of a (half a unit in the 15th significant
    // digit), so epsilon is known within about h / (a eps), relatively.
    const double h = 5e-15 * std::pow(10.0, std::floor(std::log10(a)));
    const double eps = epsilon_of_alpha(a, name);
    if (h > 1e-9 * a * eps)
      throw std::invalid_argument(std::string(name) + " was bound as a REAL, which SQLite passes on with 15 "
                                  "significant digits (" + describe(p) + "), and that fixes epsilon only to within a "
                                  "factor 1 + " + format_figure(h / (a * eps), Rounding::Up) +
                                  ": write it in the SQL text instead of binding it");
  }
  return a;
}

std::string text_param(const Param& p, const char* name, const char* domain) {
  if (p.type != Param::Type::Text)
    throw std::invalid_argument(std::string(name) + " must be text (" + domain + "), but is " + describe(p));
  return p.bytes;
}

}  // namespace optdp::sql
