// optdp for PostgreSQL: authenticated shipped states (docs/scale.md, shards;
// docs/boundary.md). A *_state aggregate's bytes are an exact aggregate that
// a merge adds and releases with noise; a merge cannot tell a real state from
// bytes its caller made up (a "count state" whose bytes are a salary would be
// released with a count's noise), nor, by the bytes alone, a second copy of a
// state it has already added. So every shipped state is
//   the state's bytes || a nonce || a MAC,
// the nonce 16 random bytes drawn when the state is sealed, the MAC
// HMAC-SHA-512-256 (libsodium's crypto_auth) keyed by the state key, over
//   "optdp shipped state" || format version || the state's kind || bytes || nonce,
// and a merge verifies it before it reads anything else of the state. The
// kind and version in the MAC keep a state of one aggregate from verifying
// in another's merge, and a state of an older format from verifying at all.
// A merge then records the nonce: a transaction opens each sealed state at
// most once, so two copies of one state (UNION ALL of the same shard's
// answer, a state kept and given again) are refused instead of counting its
// rows twice under the noise and charge of one release.
//
// The key is read from the file optdp.state_key_file names (as ssl_key_file:
// a regular file owned by the server's OS user, or by root, that no other
// user can read), never from a setting's value: PostgreSQL logs the new
// value of every setting a reload changes ("parameter ... changed to"),
// GUC_SUPERUSER_ONLY or not. The setting is of context SIGHUP (postgresql.conf
// or ALTER SYSTEM only) and hidden from other roles. The file is read at the
// first use after the backend starts or the server reloads, and again when it
// changes (its inode, size, mode or times): rotating the key is writing a new
// file in its place. The setting is honoured only when optdp is in
// shared_preload_libraries. Without a usable key the *_state and *_merge
// aggregates refuse (check_state_key, called by read_call for them).
//
// Only shipped states carry a nonce and a tag: the partial states of one
// query (parallel workers, combine functions, Citus's worker_partial_agg)
// never leave the query and are not verified; a merge's partial states list
// the nonces of the shipped states they opened (below, merge_trans).
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "postgres/aggregate.hpp"
#include "postgres/citus.hpp"
#include "postgres/common.hpp"

extern "C" {
#include "postgres.h"
#include "fmgr.h"
#include "access/parallel.h"
#include "access/xact.h"
#include "executor/nodeAgg.h"
#include "miscadmin.h"
#include "storage/proc.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
}

namespace optdp_pg {

namespace {

char* state_key_file = nullptr;  // the setting's value: the key file's path
enum class KeyState { Unset, Unreadable, NotPrivate, Malformed, Ready };
KeyState key_state = KeyState::Unset;
int key_errno = 0;          // why the file could not be read (Unreadable)
bool key_stale = true;      // the setting changed (or a reload ran) since the key was read
struct stat key_identity{}; // the file the key was read from, to notice a new one
unsigned char state_key[crypto_auth_hmacsha512256_KEYBYTES];
bool preloaded = false;  // loaded by shared_preload_libraries

constexpr char kDomain[] = "optdp shipped state";
constexpr std::uint32_t kFormat = 3;  // 2: a nonce under the MAC; 3: every state carries its parameters
constexpr std::size_t kNonceBytes = 16;
constexpr std::size_t kSealBytes = kNonceBytes + kStateTagBytes;

void assign_state_key_file(const char*, void*) { key_stale = true; }

bool same_file(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino && a.st_size == b.st_size && a.st_mode == b.st_mode &&
         a.st_uid == b.st_uid && a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec &&
         a.st_ctim.tv_sec == b.st_ctim.tv_sec && a.st_ctim.tv_nsec == b.st_ctim.tv_nsec;
}

// Reads the key from the file: 64 hexadecimal digits, then optionally
// whitespace (a line end). Sets key_state; the key bytes are kept only when Ready.
void load_state_key() {
  sodium_memzero(state_key, sizeof state_key);
  key_stale = false;
  key_identity = {};
  if (state_key_file == nullptr || state_key_file[0] == 0) {
    key_state = KeyState::Unset;
    return;
  }
  const int fd = open(state_key_file, O_RDONLY | O_CLOEXEC);  // a symbolic link is followed, as for ssl_key_file
  struct stat st{};
  if (fd < 0 || fstat(fd, &st) != 0) {
    key_errno = errno;
    if (fd >= 0) close(fd);
    key_state = KeyState::Unreadable;
    return;
  }
  key_identity = st;
  // As PostgreSQL checks ssl_key_file: a regular file, owned by the server's
  // user and closed to everyone else, or owned by root and at most readable by its group.
  const bool mine = st.st_uid == geteuid(), roots = st.st_uid == 0;
  if (!S_ISREG(st.st_mode) || (!mine && !roots) || (mine && (st.st_mode & (S_IRWXG | S_IRWXO))) ||
      (roots && (st.st_mode & (S_IWGRP | S_IXGRP | S_IRWXO)))) {
    close(fd);
    key_state = KeyState::NotPrivate;
    return;
  }
  char text[128];
  std::size_t got = 0;
  for (;;) {
    const ssize_t r = read(fd, text + got, sizeof text - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<std::size_t>(r);
    if (got == sizeof text) break;
  }
  close(fd);
  std::size_t len = got;
  while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r' || text[len - 1] == ' ' || text[len - 1] == '\t'))
    --len;
  std::size_t n = 0;
  const char* end = nullptr;
  const bool ok = got < sizeof text && len == 2 * sizeof state_key &&
                  sodium_hex2bin(state_key, sizeof state_key, text, len, nullptr, &n, &end) == 0 &&
                  n == sizeof state_key && end == text + len;
  sodium_memzero(text, sizeof text);
  if (!ok) sodium_memzero(state_key, sizeof state_key);
  key_state = ok ? KeyState::Ready : KeyState::Malformed;
}

// The key as of now: read again after a reload or when the file changed.
void refresh_state_key() {
  if (!key_stale && state_key_file != nullptr && state_key_file[0] != 0) {
    struct stat st{};
    if (stat(state_key_file, &st) != 0 || !same_file(st, key_identity)) key_stale = true;
  }
  if (key_stale) load_state_key();
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

// The nonces of the states opened in the running transaction (a hash table
// in TopTransactionContext, so freed with the transaction; forgotten at the
// transaction's end, and the local transaction id says whether the table is
// this transaction's).
HTAB* opened = nullptr;
LocalTransactionId opened_in = InvalidLocalTransactionId;

void forget_opened(XactEvent event, void*) {
  if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT || event == XACT_EVENT_PREPARE ||
      event == XACT_EVENT_PARALLEL_COMMIT || event == XACT_EVENT_PARALLEL_ABORT)
    opened = nullptr;
}

struct Opened {
  unsigned char nonce[kNonceBytes];  // the key: the entry is only its key
};

// Records a state's nonce; false if this transaction has opened it before.
bool first_opening(const unsigned char* nonce) {
  if (opened == nullptr || opened_in != MyProc->lxid) {
    opened = nullptr;
    HASHCTL ctl{};
    ctl.keysize = kNonceBytes;
    ctl.entrysize = sizeof(Opened);
    ctl.hcxt = TopTransactionContext;
    opened = hash_create("optdp opened states", 64, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
    opened_in = MyProc->lxid;
  }
  bool found = false;
  hash_search(opened, nonce, HASH_ENTER, &found);
  return !found;
}

}  // namespace

void define_state_key() {
  preloaded = process_shared_preload_libraries_in_progress;
  RegisterXactCallback(forget_opened, nullptr);
  DefineCustomStringVariable("optdp.state_key_file",
                             "The file that holds the key that authenticates shipped states (*_state, *_merge): 64 "
                             "hexadecimal digits, the same on every shard and the coordinator; readable only by the "
                             "server's OS user.",
                             nullptr, &state_key_file, "", PGC_SIGHUP, GUC_SUPERUSER_ONLY | GUC_NOT_IN_SAMPLE,
                             nullptr, assign_state_key_file, nullptr);
}

void check_state_key(const char* function) {
  if (!preloaded)
    ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                    errmsg("%s: shipped states need optdp in shared_preload_libraries (there optdp.state_key_file "
                           "is defined, superuser-only, from the server's start; loaded later, a session meets its "
                           "postgresql.conf line as a placeholder any role can read)", function)));
  refresh_state_key();
  switch (key_state) {
    case KeyState::Ready:
      return;
    case KeyState::Unset:
      ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                      errmsg("%s: optdp.state_key_file is not set: shipped states are authenticated with a key that "
                             "the administrator keeps in a file readable only by the server's OS user, the same key "
                             "on every shard and the coordinator (optdp.state_key_file = its path in "
                             "postgresql.conf; the file holds 64 hexadecimal digits, e.g. from openssl rand -hex "
                             "32)", function)));
    case KeyState::Unreadable:
      ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                      errmsg("%s: the file optdp.state_key_file names cannot be read: %s", function,
                             strerror(key_errno))));
    case KeyState::NotPrivate:
      ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                      errmsg("%s: the file optdp.state_key_file names must be a regular file that only the server's "
                             "OS user can read (owned by it, mode 0600 or less; or owned by root, mode 0640 or less)",
                             function)));
    case KeyState::Malformed:
      ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                      errmsg("%s: the file optdp.state_key_file names must hold 64 hexadecimal digits (32 random "
                             "bytes, e.g. from openssl rand -hex 32)", function)));
  }
}

bytea* seal_state(const char* function, Shipped kind, bytea* state) {
  check_state_key(function);
  const std::size_t n = VARSIZE_ANY_EXHDR(state);
  auto* out = static_cast<bytea*>(palloc(VARHDRSZ + n + kSealBytes));
  SET_VARSIZE(out, VARHDRSZ + n + kSealBytes);
  auto* data = reinterpret_cast<unsigned char*>(VARDATA(out));
  std::memcpy(data, VARDATA_ANY(state), n);
  if (sodium_init() < 0)
    ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("%s: libsodium could not be initialised", function)));
  randombytes_buf(data + n, kNonceBytes);
  tag_of(kind, data, n + kNonceBytes, data + n + kNonceBytes);
  return out;
}

namespace {

// The nonce of the last state open_state opened for a merge in a partial
// step, and how many it has opened: merge_trans appends it to
// the merge's state (read only right after the merge's own step returned).
unsigned char partial_nonce[kNonceBytes];
std::uint64_t partial_opened = 0;

// Whether the running transition builds a partial state that a combine
// step takes further: a merge's under Citus's worker_partial_agg (its state
// goes to the coordinator), or in a partial Agg node of PostgreSQL (a
// partitionwise aggregate; the merges are PARALLEL RESTRICTED, so never in a
// parallel worker). The step that opens the states may see only its share of
// them, so their nonces go in the state, and the combine and final functions
// count them.
bool partial_step(FunctionCallInfo fcinfo) {
  if (fcinfo->context == nullptr || !IsA(fcinfo->context, AggState)) return false;
  if (DO_AGGSPLIT_SKIPFINAL(reinterpret_cast<AggState*>(fcinfo->context)->aggsplit)) return true;
  Aggref* a = AggGetAggref(fcinfo);
  Oid inner;
  return a != nullptr && citus_aggregate(a, &inner) == CitusAgg::WorkerPartial;
}

[[noreturn]] void refuse_merged_twice(const char* merge) {
  ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                  errmsg("%s: state was already merged in this transaction (a shipped state counts once)", merge)));
  pg_unreachable();
}

}  // namespace

bytea* open_state(FunctionCallInfo fcinfo, int i, const char* merge, Shipped kind) {
  if (PG_ARGISNULL(i))
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s: state must be a %s state, but is NULL", merge, shipped_by(kind))));
  check_state_key(merge);
  // The nonces are counted in one process: a parallel worker would see only
  // its share, and its table dies with it (the merges are PARALLEL
  // RESTRICTED: no plan puts one here).
  const bool partial = partial_step(fcinfo);
  if (IsParallelWorker())
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("%s: shipped states are merged in the leader process, not in a parallel worker (each "
                           "state counts once per transaction; SET max_parallel_workers_per_gather = 0)", merge)));
  bytea* in = PG_GETARG_BYTEA_PP(i);
  const std::size_t size = VARSIZE_ANY_EXHDR(in);
  const auto* data = reinterpret_cast<const unsigned char*>(VARDATA_ANY(in));
  bool ok = size >= kSealBytes;
  if (ok) {
    unsigned char tag[kStateTagBytes];
    tag_of(kind, data, size - kStateTagBytes, tag);
    ok = sodium_memcmp(tag, data + size - kStateTagBytes, kStateTagBytes) == 0;
  }
  if (!ok)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s: state is not a state this cluster shipped (its authentication tag does not verify; "
                           "shards and coordinator must share the key of optdp.state_key_file)", merge)));
  const std::size_t n = size - kSealBytes;
  if (partial) {
    // Counted where the partial states meet (merge_combine, merge_final):
    // this step sees only its share.
    std::memcpy(partial_nonce, data + n, kNonceBytes);
    ++partial_opened;
  } else if (!first_opening(data + n)) {
    refuse_merged_twice(merge);
  }
  auto* out = static_cast<bytea*>(palloc(VARHDRSZ + n));
  SET_VARSIZE(out, VARHDRSZ + n);
  std::memcpy(VARDATA(out), data, n);
  return out;
}

// ---- a merge's transition state: its release's state and the nonces ----------
//
// A *_merge's state is its release's state, then room for `capacity` nonces
// (16 bytes each) of which the first `count` are those of the shipped states
// it opened in a partial step (partial_step: under Citus's
// worker_partial_agg, or in a partial Agg node), then
// count and capacity (8 bytes each; INITCOND: the release's, then 16 zero
// bytes). In a serial plan (and pushed down under Citus) the transaction's
// table counts every state as it is opened and the list stays empty. In
// Citus's partial plan each worker's backend sees only its shards' states,
// so their nonces travel in the partial state: the combine function (on
// Citus's coordinator) refuses a nonce that two partial
// states (or one) carry, and the final function records the combined nonces
// in that process's table before it releases, so that two merges of one
// transaction cannot both add a state. A forged partial state could drop
// a nonce, but a role that could have one combined could forge the rows it
// holds too (docs/scale.md, "Privileges": none is ever combined).
//
// The merge's own step runs on the release's state in place: the state's
// length is set to the release's part for the call, so that the room and
// the trailer after it stay untouched (no merge step frees or reallocates
// the state it is given: each modifies it in place or returns a new one),
// and the list grows by doubling its room; so one server's merges copy no
// more than before, and a shard's list costs O(1) per state.

namespace {

struct Merged {
  unsigned char* inner;  // the release's state
  std::size_t inner_size;
  unsigned char* nonces;  // capacity * kNonceBytes, after it; the first count in use
  std::uint64_t count, capacity;
};
constexpr std::size_t kTrailer = 2 * sizeof(std::uint64_t);

Merged split_merged(FunctionCallInfo fcinfo, bytea* st) {
  const std::size_t size = VARSIZE_ANY_EXHDR(st);
  auto* data = reinterpret_cast<unsigned char*>(VARDATA_ANY(st));
  Merged m{};
  if (size >= kTrailer) {
    std::memcpy(&m.count, data + size - kTrailer, sizeof m.count);
    std::memcpy(&m.capacity, data + size - sizeof m.capacity, sizeof m.capacity);
  }
  if (size < kTrailer || m.capacity > (size - kTrailer) / kNonceBytes || m.count > m.capacity)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s: the partial state is not one of this merge's (its list of shipped states does not "
                           "fit its size)", agg_name(fcinfo, "optdp"))));
  m.inner = data;
  m.inner_size = size - kTrailer - m.capacity * kNonceBytes;
  m.nonces = data + m.inner_size;
  return m;
}

bytea* inner_copy(const Merged& m) {
  auto* b = static_cast<bytea*>(palloc(VARHDRSZ + m.inner_size));
  SET_VARSIZE(b, VARHDRSZ + m.inner_size);
  std::memcpy(VARDATA(b), m.inner, m.inner_size);
  return b;
}

void write_trailer(unsigned char* end, std::uint64_t count, std::uint64_t capacity) {
  std::memcpy(end - kTrailer, &count, sizeof count);
  std::memcpy(end - sizeof capacity, &capacity, sizeof capacity);
}

// A merge's state: inner's bytes, room for capacity nonces holding the
// count given, then the trailer.
bytea* merged_state(bytea* inner, const unsigned char* nonces, std::uint64_t count, std::uint64_t capacity) {
  const std::size_t n = VARSIZE_ANY_EXHDR(inner);
  const std::size_t size = n + capacity * kNonceBytes + kTrailer;
  auto* b = static_cast<bytea*>(palloc0(VARHDRSZ + size));
  SET_VARSIZE(b, VARHDRSZ + size);
  auto* data = reinterpret_cast<unsigned char*>(VARDATA(b));
  std::memcpy(data, VARDATA_ANY(inner), n);
  if (count > 0) std::memcpy(data + n, nonces, count * kNonceBytes);
  write_trailer(data + size, count, capacity);
  return b;
}

int compare_nonces(const void* a, const void* b) { return std::memcmp(a, b, kNonceBytes); }

}  // namespace

Datum merge_trans(FunctionCallInfo fcinfo, PGFunction add) {
  const bool partial = partial_step(fcinfo);
  bytea* st = PG_ARGISNULL(0) ? nullptr : reinterpret_cast<bytea*>(PG_GETARG_DATUM(0));
  if (st != nullptr && (!VARATT_IS_4B_U(st) || !AggCheckCallContext(fcinfo, nullptr))) {
    st = PG_GETARG_BYTEA_P_COPY(0);  // not the aggregate's own, writable state: a copy of it
    fcinfo->args[0].value = PointerGetDatum(st);
  }
  Merged m{};
  std::size_t size = 0;
  if (st != nullptr) {
    m = split_merged(fcinfo, st);
    size = VARSIZE(st);
    SET_VARSIZE(st, VARHDRSZ + m.inner_size);  // the release's state, for the merge's step
  }
  const std::uint64_t opened_before = partial_opened;
  bytea* inner = reinterpret_cast<bytea*>(DatumGetPointer(add(fcinfo)));
  if (partial && partial_opened != opened_before + 1)
    ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("%s: a merge's step opened no state",
                                                            agg_name(fcinfo, "optdp"))));
  const std::uint64_t count = m.count + (partial ? 1 : 0);
  if (st != nullptr && inner == st && VARSIZE(st) == VARHDRSZ + m.inner_size && count <= m.capacity) {
    // in place: the room and the trailer are as they were
    SET_VARSIZE(st, size);
    if (partial) {
      std::memcpy(m.nonces + m.count * kNonceBytes, partial_nonce, kNonceBytes);
      write_trailer(reinterpret_cast<unsigned char*>(st) + size, count, m.capacity);
    }
    PG_RETURN_BYTEA_P(st);
  }
  const std::uint64_t capacity = count <= m.capacity ? m.capacity : std::max<std::uint64_t>(4, 2 * m.capacity);
  bytea* out = merged_state(inner, m.nonces, m.count, capacity);
  if (partial) {
    auto* data = reinterpret_cast<unsigned char*>(VARDATA(out));
    std::memcpy(data + VARSIZE_ANY_EXHDR(inner) + m.count * kNonceBytes, partial_nonce, kNonceBytes);
    write_trailer(data + VARSIZE_ANY_EXHDR(out), count, capacity);
  }
  PG_RETURN_BYTEA_P(out);
}

Datum merge_combine(FunctionCallInfo fcinfo, PGFunction combine) {
  if (PG_ARGISNULL(0) || PG_ARGISNULL(1)) {
    // STRICT: PostgreSQL and Citus keep the other state (checked as any)
    if (!PG_ARGISNULL(0)) (void)split_merged(fcinfo, PG_GETARG_BYTEA_PP(0));
    if (!PG_ARGISNULL(1)) (void)split_merged(fcinfo, PG_GETARG_BYTEA_PP(1));
    if (PG_ARGISNULL(0) && PG_ARGISNULL(1)) PG_RETURN_NULL();
    PG_RETURN_DATUM(PG_ARGISNULL(0) ? PG_GETARG_DATUM(1) : PG_GETARG_DATUM(0));
  }
  const Merged a = split_merged(fcinfo, PG_GETARG_BYTEA_PP(0));
  const Merged b = split_merged(fcinfo, PG_GETARG_BYTEA_PP(1));
  // the union, sorted: a nonce that either state or both carry twice is a
  // state stored twice (on two shards, or twice on one). Refused here as
  // well as in merge_final: under a hashed plan every group's combine comes
  // before any group's final, so no group is released and charged before
  // the refusal (merge_final alone would refuse only when it reached the
  // group, and adds the check against this transaction's other merges).
  const std::uint64_t count = a.count + b.count;
  auto* nonces = static_cast<unsigned char*>(palloc(count * kNonceBytes + 1));
  if (a.count > 0) std::memcpy(nonces, a.nonces, a.count * kNonceBytes);
  if (b.count > 0) std::memcpy(nonces + a.count * kNonceBytes, b.nonces, b.count * kNonceBytes);
  qsort(nonces, count, kNonceBytes, compare_nonces);
  for (std::uint64_t i = 1; i < count; ++i)
    if (std::memcmp(nonces + (i - 1) * kNonceBytes, nonces + i * kNonceBytes, kNonceBytes) == 0)
      refuse_merged_twice(agg_name(fcinfo, "optdp"));
  fcinfo->args[0].value = PointerGetDatum(inner_copy(a));
  fcinfo->args[1].value = PointerGetDatum(inner_copy(b));
  const Datum out = combine(fcinfo);
  return PointerGetDatum(merged_state(DatumGetByteaPP(out), nonces, count, count));
}

Datum merge_final(FunctionCallInfo fcinfo, PGFunction release) {
  if (!PG_ARGISNULL(0)) {
    const Merged m = split_merged(fcinfo, PG_GETARG_BYTEA_PP(0));
    // The partial states' nonces, counted in this transaction as the states
    // opened here are, before the release (its charge and its noise).
    for (std::uint64_t i = 0; i < m.count; ++i)
      if (!first_opening(m.nonces + i * kNonceBytes)) refuse_merged_twice(agg_name(fcinfo, "optdp"));
    fcinfo->args[0].value = PointerGetDatum(inner_copy(m));
  }
  return release(fcinfo);
}

}  // namespace optdp_pg
