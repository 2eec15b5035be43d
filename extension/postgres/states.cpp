// optdp for PostgreSQL: authenticated shipped states (docs/scale.md, shards;
// docs/boundary.md). A *_state aggregate's bytes are an exact aggregate that
// a merge adds and releases with noise; a merge cannot tell a real state from
// bytes its caller made up (a "count state" whose bytes are a salary would be
// released with a count's noise). So every shipped state ends with a MAC,
// HMAC-SHA-512-256 (libsodium's crypto_auth), keyed by optdp.state_key, over
//   "optdp shipped state" || format version || the state's kind || its bytes,
// and a merge verifies it before it reads anything else of the state. The
// kind and version in the MAC keep a state of one aggregate from verifying
// in another's merge.
//
// The key is a GUC of context SIGHUP (postgresql.conf or ALTER SYSTEM only:
// no SET, no ALTER ROLE/DATABASE SET, whose values any role can read in
// pg_db_role_setting), hidden from non-superusers (GUC_SUPERUSER_ONLY: SHOW
// and current_setting refuse, pg_settings omits it; members of
// pg_read_all_settings can read it) and from SHOW ALL. It is honoured only
// when optdp is in shared_preload_libraries: otherwise a backend holds the
// postgresql.conf line as a placeholder, readable by any role, until optdp is
// loaded. Without a usable key the *_state and *_merge aggregates refuse
// (check_state_key, called by read_call for them).
//
// Only shipped states carry a tag: the partial states of one query (parallel
// workers, combine functions) never leave the server and are not verified.
#include <cstdint>
#include <cstring>

#include <sodium.h>

#include "postgres/aggregate.hpp"
#include "postgres/common.hpp"

extern "C" {
#include "postgres.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/guc.h"
}

namespace optdp_pg {

namespace {

char* state_key_text = nullptr;  // the GUC's value
enum class KeyState { Missing, Malformed, Ready };
KeyState key_state = KeyState::Missing;
unsigned char state_key[crypto_auth_hmacsha512256_KEYBYTES];
bool preloaded = false;  // loaded by shared_preload_libraries

constexpr char kDomain[] = "optdp shipped state";
constexpr std::uint32_t kFormat = 1;

// Decodes the key when it is set. A malformed key is recorded and refused
// when used, not rejected by a check hook: PostgreSQL's rejection of a
// setting quotes its value in the server log.
void assign_state_key(const char* value, void*) {
  sodium_memzero(state_key, sizeof state_key);
  if (value == nullptr || value[0] == 0) {
    key_state = KeyState::Missing;
    return;
  }
  std::size_t n = 0;
  const char* end = nullptr;
  const bool ok = std::strlen(value) == 2 * sizeof state_key &&
                  sodium_hex2bin(state_key, sizeof state_key, value, std::strlen(value), nullptr, &n, &end) == 0 &&
                  n == sizeof state_key && end != nullptr && *end == 0;
  if (!ok) sodium_memzero(state_key, sizeof state_key);
  key_state = ok ? KeyState::Ready : KeyState::Malformed;
}

void tag_of(Shipped kind, const unsigned char* data, std::size_t n, unsigned char* out) {
  crypto_auth_hmacsha512256_state st;
  crypto_auth_hmacsha512256_init(&st, state_key, sizeof state_key);
  crypto_auth_hmacsha512256_update(&st, reinterpret_cast<const unsigned char*>(kDomain), sizeof kDomain);
  const std::uint32_t head[2] = {kFormat, static_cast<std::uint32_t>(kind)};
  crypto_auth_hmacsha512256_update(&st, reinterpret_cast<const unsigned char*>(head), sizeof head);
  crypto_auth_hmacsha512256_update(&st, data, n);
  crypto_auth_hmacsha512256_final(&st, out);
  sodium_memzero(&st, sizeof st);
}

}  // namespace

void define_state_key() {
  preloaded = process_shared_preload_libraries_in_progress;
  DefineCustomStringVariable("optdp.state_key",
                             "The key that authenticates shipped states (*_state, *_merge): 64 hexadecimal digits, "
                             "the same on every shard and the coordinator.",
                             nullptr, &state_key_text, "", PGC_SIGHUP,
                             GUC_SUPERUSER_ONLY | GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE, nullptr, assign_state_key,
                             nullptr);
}

void check_state_key(const char* function) {
  if (!preloaded)
    ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                    errmsg("%s: shipped states need optdp in shared_preload_libraries (there optdp.state_key is "
                           "hidden from other roles from the server's start; loaded later, its postgresql.conf "
                           "line is readable by any role until optdp is loaded)", function)));
  if (key_state == KeyState::Missing)
    ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                    errmsg("%s: optdp.state_key is not set: shipped states are authenticated with a key that the "
                           "administrator sets in postgresql.conf, the same on every shard and the coordinator "
                           "(optdp.state_key = 64 hexadecimal digits, e.g. from openssl rand -hex 32)", function)));
  if (key_state == KeyState::Malformed)
    ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                    errmsg("%s: optdp.state_key must be 64 hexadecimal digits (32 random bytes, e.g. from openssl "
                           "rand -hex 32)", function)));
}

bytea* seal_state(const char* function, Shipped kind, bytea* state) {
  check_state_key(function);
  const std::size_t n = VARSIZE_ANY_EXHDR(state);
  auto* out = static_cast<bytea*>(palloc(VARHDRSZ + n + kStateTagBytes));
  SET_VARSIZE(out, VARHDRSZ + n + kStateTagBytes);
  std::memcpy(VARDATA(out), VARDATA_ANY(state), n);
  tag_of(kind, reinterpret_cast<const unsigned char*>(VARDATA(out)), n,
         reinterpret_cast<unsigned char*>(VARDATA(out) + n));
  return out;
}

bytea* open_state(FunctionCallInfo fcinfo, int i, const char* merge, Shipped kind) {
  if (PG_ARGISNULL(i))
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s: state must be a %s state, but is NULL", merge, shipped_by(kind))));
  check_state_key(merge);
  bytea* in = PG_GETARG_BYTEA_PP(i);
  const std::size_t size = VARSIZE_ANY_EXHDR(in);
  bool ok = size >= kStateTagBytes;
  if (ok) {
    const std::size_t n = size - kStateTagBytes;
    const auto* data = reinterpret_cast<const unsigned char*>(VARDATA_ANY(in));
    unsigned char tag[kStateTagBytes];
    tag_of(kind, data, n, tag);
    ok = sodium_memcmp(tag, data + n, kStateTagBytes) == 0;
  }
  if (!ok)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s: state is not a state this cluster shipped (its authentication tag does not verify; "
                           "shards and coordinator must share optdp.state_key)", merge)));
  const std::size_t n = size - kStateTagBytes;
  auto* out = static_cast<bytea*>(palloc(VARHDRSZ + n));
  SET_VARSIZE(out, VARHDRSZ + n);
  std::memcpy(VARDATA(out), VARDATA_ANY(in), n);
  return out;
}

}  // namespace optdp_pg
