// For scripts/lib/make-link-order.sh only (LD_PRELOAD into a release proxyapp): records which
// functions of the main executable run, each the first time it does, exactly, compiler-made ones
// included (outlined copies, witnesses, specializations), which instrumented builds miss and
// sampling profilers see only when hot.
//
// Every function entry named in LINK_ORDER_TRACE_LIST (hex addresses from the executable's base)
// becomes an int3; the first time one runs, the SIGTRAP handler puts its byte back, appends its
// address to LINK_ORDER_TRACE_OUT and resumes it. SIGUSR2 sets every trap again after a "-" line,
// so what runs after start-up is listed again. The code pages stay writable: a tracing run only.
// Preload it into the traced program itself, not a wrapper (`timeout`, `env`): it unsets
// LD_PRELOAD for whatever the process starts. Tested by LinkOrderTraceTests.
#if !defined(__x86_64__) || !defined(__linux__)
#error "link-order-trace.c reads the instruction pointer of x86-64 Linux; the link order is made there"
#endif
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

static uintptr_t base;
static uintptr_t *addrs;
static unsigned char *orig;
static size_t count;
static int out = -1;

static long find(uintptr_t a) {
    size_t lo = 0, hi = count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (addrs[mid] < a) lo = mid + 1; else hi = mid;
    }
    return lo < count && addrs[lo] == a ? (long)lo : -1;
}

// Appends `value` in hex and a newline (no stdio: this runs in signal handlers).
static void record(uintptr_t value) {
    char line[24];
    int n = sizeof line;
    line[--n] = '\n';
    do {
        line[--n] = "0123456789abcdef"[value & 15];
        value >>= 4;
    } while (value && n > 0);
    if (out >= 0) (void)!write(out, line + n, sizeof line - n);
}

static void on_trap(int sig, siginfo_t *info, void *context) {
    ucontext_t *uc = context;
    uintptr_t at = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP] - 1;
    long i = find(at - base);
    // Not one of ours (an int3 in the code itself, never armed): the default action.
    if (i < 0 || orig[i] == 0xCC) { signal(SIGTRAP, SIG_DFL); raise(SIGTRAP); return; }
    unsigned char *p = (unsigned char *)at;
    if (*p == 0xCC) {  // another thread may have put it back already
        *p = orig[i];
        record(at - base);
    }
    uc->uc_mcontext.gregs[REG_RIP] = (greg_t)at;
}

static void on_rearm(int sig) {
    if (out >= 0) (void)!write(out, "-\n", 2);
    for (size_t i = 0; i < count; i++)
        if (orig[i] != 0xCC) *(unsigned char *)(base + addrs[i]) = 0xCC;
}

static int cmp(const void *a, const void *b) {
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

__attribute__((constructor)) static void init(void) {
    const char *list = getenv("LINK_ORDER_TRACE_LIST"), *outpath = getenv("LINK_ORDER_TRACE_OUT");
    if (!list || !outpath) return;
    unsetenv("LD_PRELOAD");  // not for the processes it starts
    char exe[4096]; ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return; exe[n] = 0;
    FILE *m = fopen("/proc/self/maps", "r"); if (!m) return;
    char line[8192]; uintptr_t tlo = 0, thi = 0;
    while (fgets(line, sizeof line, m)) {
        unsigned long lo, hi, off; char perm[8], path[4096] = "";
        if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095s", &lo, &hi, perm, &off, path) >= 4 && strcmp(path, exe) == 0) {
            if (off == 0 && !base) base = lo;
            if (perm[2] == 'x') { tlo = lo; thi = hi; }
        }
    }
    fclose(m);
    if (!base || !tlo) return;
    FILE *f = fopen(list, "r"); if (!f) return;
    size_t cap = 1 << 16; addrs = malloc(cap * sizeof *addrs);
    unsigned long a;
    while (fscanf(f, "%lx", &a) == 1) {
        if (base + a < tlo || base + a >= thi) continue;
        if (count == cap) { cap *= 2; addrs = realloc(addrs, cap * sizeof *addrs); }
        addrs[count++] = a;
    }
    fclose(f);
    qsort(addrs, count, sizeof *addrs, cmp);
    size_t k = 0;
    for (size_t i = 0; i < count; i++) if (!k || addrs[i] != addrs[k - 1]) addrs[k++] = addrs[i];
    count = k;
    orig = malloc(count);
    out = open(outpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    struct sigaction sa; memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_trap; sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER;
    sigaction(SIGTRAP, &sa, NULL);
    signal(SIGUSR2, on_rearm);
    if (mprotect((void *)tlo, thi - tlo, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) return;
    for (size_t i = 0; i < count; i++) {
        unsigned char *p = (unsigned char *)(base + addrs[i]);
        orig[i] = *p;
        *p = 0xCC;
    }
}
