/* Preloaded after the ASan runtime into the PostgreSQL tools and servers of
 * the sanitizer pass (scripts/test.sh). The runtime, preloaded into an
 * uninstrumented program, initialises at the first malloc. In PostgreSQL's
 * binaries that is inside libgpg-error's constructor, in bindtextdomain,
 * which holds glibc's gettext lock as a writer; the runtime's initialisation
 * then takes the same lock as a reader (dlerror, translating a message), and
 * the lock is left corrupt: the next bindtextdomain (postgres -V, as initdb
 * runs it) or newlocale/freelocale (p11-kit) waits forever. These wrappers
 * allocate once before entering the real functions, so the runtime
 * initialises with no lock held. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <locale.h>
#include <stdlib.h>

static void allocate_once(void) {
  void* volatile p = malloc(1); /* volatile: the pair must not be optimised away */
  free(p);
}

char* bindtextdomain(const char* domain, const char* dir) {
  allocate_once();
  char* (*real)(const char*, const char*) = (char* (*)(const char*, const char*))dlsym(RTLD_NEXT, "bindtextdomain");
  return real(domain, dir);
}

locale_t newlocale(int mask, const char* locale, locale_t base) {
  allocate_once();
  locale_t (*real)(int, const char*, locale_t) = (locale_t(*)(int, const char*, locale_t))dlsym(RTLD_NEXT, "newlocale");
  return real(mask, locale, base);
}
