/*
 * A stand-in for libmooncake_store.so, written for kvshare's tests from
 * the signatures of Mooncake's store_c.h. It stores nothing: every
 * function records what it received and answers what the test scripted
 * through the stub_* functions at the end of this file.
 *
 * Build: gcc -shared -fPIC -o libstub.so stub.c -lpthread
 * -DSTUB_OMIT_<NAME> leaves mooncake_store_<name> out (for the test of a
 * library that lacks a symbol).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef void *mooncake_store_t;

/* A put's replicate config, laid out as store_c.h declares it. */
typedef struct mooncake_replicate_config {
    size_t replica_num;
    int with_soft_pin;
    int with_hard_pin;
    const char **preferred_segments;
    size_t preferred_segments_count;
} mooncake_replicate_config_t;

#define STUB_MAX_PREFERRED 8

#define STUB_MAX_KEYS 64
#define STUB_KEY_BYTES 256
#define STUB_LOG_BYTES 65536
#define STUB_MAGIC 0x6b767368u

/* A handle the stub hands out; magic is cleared when destroyed. */
struct stub_handle {
    unsigned magic;
    int set_up;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;

/* What the test scripted. */
static int create_null;
static int setup_rc;
static int setup_held;
static int batch_rc;
static int health_rc;
static int register_rc;
static int unregister_rc;
static int remove_rc;
static int remove_force_seen;
static int64_t codes[STUB_MAX_KEYS];
static size_t ncodes;

/* What the stub saw. */
static char call_log[STUB_LOG_BYTES];
static int setup_entered;
static int destroyed;
static char keys_seen[STUB_MAX_KEYS][STUB_KEY_BYTES];
static uint64_t key_addrs_seen[STUB_MAX_KEYS];
/* The replicate config the last batch_put_from received: whether there
 * was one, its numbers, and its preferred segments. */
static int replicate_given;
static uint64_t replicate_numbers[4]; /* replica_num, soft pin, hard pin, preferred count */
static char preferred_seen[STUB_MAX_PREFERRED][STUB_KEY_BYTES];
static uint64_t bufs_seen[STUB_MAX_KEYS];
static uint64_t sizes_seen[STUB_MAX_KEYS];
static uint64_t sums_seen[STUB_MAX_KEYS];
static size_t count_seen;
static char setup_strings[5][STUB_KEY_BYTES];
static uint64_t setup_sizes[2];
static long create_tid, setup_tid;
static uint64_t registered_addr, registered_size, unregistered_addr;

/* note appends a name to the call log; with a bad handle, "!name". */
static void note(const char *name, mooncake_store_t store, int needs_setup) {
    struct stub_handle *h = store;
    int ok = h != NULL && h->magic == STUB_MAGIC && (!needs_setup || h->set_up);
    size_t used = strlen(call_log);
    snprintf(call_log + used, sizeof call_log - used, "%s%s%s",
             used ? "," : "", ok ? "" : "!", name);
}

static void copy_string(char *dst, const char *src) {
    snprintf(dst, STUB_KEY_BYTES, "%s", src ? src : "(null)");
}

/* fnv1a sums n bytes at p, so a test can tell the stub read its buffer. */
static uint64_t fnv1a(const unsigned char *p, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

static void record_batch(const char **keys, void **buffers, const size_t *sizes,
                         size_t count, int read_buffers) {
    count_seen = count;
    for (size_t i = 0; i < count && i < STUB_MAX_KEYS; i++) {
        copy_string(keys_seen[i], keys[i]);
        key_addrs_seen[i] = (uint64_t)(uintptr_t)keys[i];
        bufs_seen[i] = buffers ? (uint64_t)(uintptr_t)buffers[i] : 0;
        sizes_seen[i] = sizes ? sizes[i] : 0;
        sums_seen[i] = (read_buffers && buffers && buffers[i])
                           ? fnv1a(buffers[i], sizes[i])
                           : 0;
    }
}

/* unused records a call of a function the binding must never make and
 * answers the C wrapper's -1. */
static int unused(const char *name, mooncake_store_t store) {
    pthread_mutex_lock(&mu);
    note(name, store, 1);
    pthread_mutex_unlock(&mu);
    return -1;
}

/* The thread create ran on: a thread-specific value whose destructor
 * runs when that thread exits, so a test can see the thread go. */
static pthread_key_t create_thread_key;
static int create_thread_exited;

static void create_thread_gone(void *unused_value) {
    (void)unused_value;
    pthread_mutex_lock(&mu);
    create_thread_exited = 1;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&mu);
}

__attribute__((constructor)) static void create_thread_key_init(void) {
    pthread_key_create(&create_thread_key, create_thread_gone);
}

/* ---- store_c.h ---------------------------------------------------------- */

#ifndef STUB_OMIT_CREATE
mooncake_store_t mooncake_store_create(void) {
    pthread_setspecific(create_thread_key, &create_thread_key);
    pthread_mutex_lock(&mu);
    create_tid = (long)syscall(SYS_gettid);
    struct stub_handle *h = NULL;
    if (!create_null) {
        h = calloc(1, sizeof *h);
        h->magic = STUB_MAGIC;
    }
    size_t used = strlen(call_log);
    snprintf(call_log + used, sizeof call_log - used, "%screate", used ? "," : "");
    pthread_mutex_unlock(&mu);
    return h;
}
#endif

#ifndef STUB_OMIT_DESTROY
void mooncake_store_destroy(mooncake_store_t store) {
    pthread_mutex_lock(&mu);
    note("destroy", store, 0);
    struct stub_handle *h = store;
    if (h != NULL && h->magic == STUB_MAGIC) {
        h->magic = 0;
        free(h);
    }
    destroyed++;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&mu);
}
#endif

#ifndef STUB_OMIT_SETUP
int mooncake_store_setup(mooncake_store_t store, const char *local_hostname,
                         const char *metadata_server, uint64_t global_segment_size,
                         uint64_t local_buffer_size, const char *protocol,
                         const char *device_name, const char *master_server_addr) {
    pthread_mutex_lock(&mu);
    note("setup", store, 0);
    setup_tid = (long)syscall(SYS_gettid);
    copy_string(setup_strings[0], local_hostname);
    copy_string(setup_strings[1], metadata_server);
    copy_string(setup_strings[2], protocol);
    copy_string(setup_strings[3], device_name);
    copy_string(setup_strings[4], master_server_addr);
    setup_sizes[0] = global_segment_size;
    setup_sizes[1] = local_buffer_size;
    setup_entered = 1;
    pthread_cond_broadcast(&changed);
    while (setup_held) pthread_cond_wait(&changed, &mu);
    int rc = setup_rc;
    if (rc == 0) ((struct stub_handle *)store)->set_up = 1;
    pthread_mutex_unlock(&mu);
    return rc;
}
#endif

#ifndef STUB_OMIT_INIT_ALL
int mooncake_store_init_all(mooncake_store_t store, const char *protocol,
                            const char *device_name, uint64_t mount_segment_size) {
    (void)protocol, (void)device_name, (void)mount_segment_size;
    return unused("init_all", store);
}
#endif

#ifndef STUB_OMIT_HEALTH_CHECK
int mooncake_store_health_check(mooncake_store_t store) {
    pthread_mutex_lock(&mu);
    note("health_check", store, 1);
    int rc = health_rc;
    pthread_mutex_unlock(&mu);
    return rc;
}
#endif

#ifndef STUB_OMIT_PUT
int mooncake_store_put(mooncake_store_t store, const char *key, const void *value,
                       size_t size, const mooncake_replicate_config_t *config) {
    (void)key, (void)value, (void)size, (void)config;
    return unused("put", store);
}
#endif

#ifndef STUB_OMIT_PUT_FROM
int mooncake_store_put_from(mooncake_store_t store, const char *key, void *buffer,
                            size_t size, const mooncake_replicate_config_t *config) {
    (void)key, (void)buffer, (void)size, (void)config;
    return unused("put_from", store);
}
#endif

#ifndef STUB_OMIT_BATCH_PUT_FROM
int mooncake_store_batch_put_from(mooncake_store_t store, const char **keys,
                                  void **buffers, const size_t *sizes, size_t count,
                                  const mooncake_replicate_config_t *config,
                                  int *results_out) {
    pthread_mutex_lock(&mu);
    note("batch_put_from", store, 1);
    record_batch(keys, buffers, sizes, count, 1);
    int rc = batch_rc;
    replicate_given = config != NULL;
    memset(replicate_numbers, 0, sizeof replicate_numbers);
    memset(preferred_seen, 0, sizeof preferred_seen);
    if (config != NULL) {
        replicate_numbers[0] = config->replica_num;
        replicate_numbers[1] = (uint64_t)config->with_soft_pin;
        replicate_numbers[2] = (uint64_t)config->with_hard_pin;
        replicate_numbers[3] = config->preferred_segments_count;
        for (size_t i = 0; i < config->preferred_segments_count && i < STUB_MAX_PREFERRED; i++)
            snprintf(preferred_seen[i], STUB_KEY_BYTES, "%s", config->preferred_segments[i]);
    }
    if (rc == 0) {
        for (size_t i = 0; i < count; i++) results_out[i] = i < ncodes ? (int)codes[i] : 0;
    }
    pthread_mutex_unlock(&mu);
    return rc;
}
#endif

#ifndef STUB_OMIT_GET_INTO
int64_t mooncake_store_get_into(mooncake_store_t store, const char *key, void *buffer,
                                size_t size) {
    (void)key, (void)buffer, (void)size;
    return unused("get_into", store);
}
#endif

#ifndef STUB_OMIT_BATCH_GET_INTO
/* A get answering n > 0 writes n bytes: the key's bytes, repeated. */
int mooncake_store_batch_get_into(mooncake_store_t store, const char **keys,
                                  void **buffers, const size_t *sizes, size_t count,
                                  int64_t *results_out) {
    pthread_mutex_lock(&mu);
    note("batch_get_into", store, 1);
    record_batch(keys, buffers, sizes, count, 0);
    int rc = batch_rc;
    if (rc == 0) {
        for (size_t i = 0; i < count; i++) {
            int64_t code = i < ncodes ? codes[i] : (int64_t)sizes[i];
            if (code > 0 && (size_t)code <= sizes[i]) {
                unsigned char *dst = buffers[i];
                size_t klen = strlen(keys[i]);
                for (int64_t j = 0; j < code; j++) dst[j] = (unsigned char)keys[i][j % klen];
            }
            results_out[i] = code;
        }
    }
    pthread_mutex_unlock(&mu);
    return rc;
}
#endif

#ifndef STUB_OMIT_IS_EXIST
int mooncake_store_is_exist(mooncake_store_t store, const char *key) {
    (void)key;
    return unused("is_exist", store);
}
#endif

#ifndef STUB_OMIT_BATCH_IS_EXIST
int mooncake_store_batch_is_exist(mooncake_store_t store, const char **keys, size_t count,
                                  int *results_out) {
    pthread_mutex_lock(&mu);
    note("batch_is_exist", store, 1);
    record_batch(keys, NULL, NULL, count, 0);
    int rc = batch_rc;
    if (rc == 0) {
        for (size_t i = 0; i < count; i++) results_out[i] = i < ncodes ? (int)codes[i] : 1;
    }
    pthread_mutex_unlock(&mu);
    return rc;
}
#endif

#ifndef STUB_OMIT_GET_SIZE
int64_t mooncake_store_get_size(mooncake_store_t store, const char *key) {
    (void)key;
    return unused("get_size", store);
}
#endif

#ifndef STUB_OMIT_GET_HOSTNAME
int mooncake_store_get_hostname(mooncake_store_t store, char *buf_out, size_t buf_len) {
    pthread_mutex_lock(&mu);
    note("get_hostname", store, 1);
    int rc = snprintf(buf_out, buf_len, "%s:12345", setup_strings[0]) < (int)buf_len ? 0 : -1;
    pthread_mutex_unlock(&mu);
    return rc;
}
#endif

#ifndef STUB_OMIT_REMOVE
int mooncake_store_remove(mooncake_store_t store, const char *key, int force) {
    pthread_mutex_lock(&mu);
    note("remove", store, 1);
    copy_string(keys_seen[0], key);
    count_seen = 1;
    remove_force_seen = force;
    int rc = remove_rc;
    pthread_mutex_unlock(&mu);
    return rc;
}
#endif

#ifndef STUB_OMIT_REMOVE_BY_REGEX
int64_t mooncake_store_remove_by_regex(mooncake_store_t store, const char *pattern,
                                       int force) {
    (void)pattern, (void)force;
    return unused("remove_by_regex", store);
}
#endif

#ifndef STUB_OMIT_REMOVE_ALL
int64_t mooncake_store_remove_all(mooncake_store_t store, int force) {
    (void)force;
    return unused("remove_all", store);
}
#endif

#ifndef STUB_OMIT_REGISTER_BUFFER
int mooncake_store_register_buffer(mooncake_store_t store, void *buffer, size_t size) {
    pthread_mutex_lock(&mu);
    note("register_buffer", store, 1);
    registered_addr = (uint64_t)(uintptr_t)buffer;
    registered_size = size;
    int rc = register_rc;
    pthread_mutex_unlock(&mu);
    return rc;
}
#endif

#ifndef STUB_OMIT_UNREGISTER_BUFFER
int mooncake_store_unregister_buffer(mooncake_store_t store, void *buffer) {
    pthread_mutex_lock(&mu);
    note("unregister_buffer", store, 1);
    unregistered_addr = (uint64_t)(uintptr_t)buffer;
    int rc = unregister_rc;
    pthread_mutex_unlock(&mu);
    return rc;
}
#endif

/* ---- scripting and reading the record (tests only) ---------------------- */

void stub_script_create_null(int on) {
    pthread_mutex_lock(&mu);
    create_null = on;
    pthread_mutex_unlock(&mu);
}

/* stub_script_setup sets setup's answer; with hold, setup waits for
 * stub_release_setup before answering. */
void stub_script_setup(int rc, int hold) {
    pthread_mutex_lock(&mu);
    setup_rc = rc;
    setup_held = hold;
    pthread_mutex_unlock(&mu);
}

void stub_release_setup(void) {
    pthread_mutex_lock(&mu);
    setup_held = 0;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&mu);
}

/* The waits below block until what a test waits for has happened, and
 * answer 1; or, after timeout_ms, 0. The bound only keeps a broken
 * binding from hanging the test run: each event normally comes at once.
 * wait_until holds mu while it tests reached(n). */
static int wait_until(int (*reached)(int), int n, int timeout_ms) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&mu);
    int rc = 0;
    while (!reached(n) && rc == 0) rc = pthread_cond_timedwait(&changed, &mu, &deadline);
    int ok = reached(n);
    pthread_mutex_unlock(&mu);
    return ok;
}

static int setup_was_entered(int n) { (void)n; return setup_entered; }
static int destroyed_times(int n) { return destroyed >= n; }
static int create_thread_has_exited(int n) { (void)n; return create_thread_exited; }

/* stub_wait_setup_entered waits until setup was called. */
int stub_wait_setup_entered(int timeout_ms) {
    return wait_until(setup_was_entered, 0, timeout_ms);
}

/* stub_wait_destroyed waits until destroy was called n times in all. */
int stub_wait_destroyed(int n, int timeout_ms) {
    return wait_until(destroyed_times, n, timeout_ms);
}

/* stub_wait_create_thread_exited waits until the thread create ran on
 * has exited. */
int stub_wait_create_thread_exited(int timeout_ms) {
    return wait_until(create_thread_has_exited, 0, timeout_ms);
}

/* stub_script_batch sets the function-level answer of the batch calls. */
void stub_script_batch(int rc) {
    pthread_mutex_lock(&mu);
    batch_rc = rc;
    pthread_mutex_unlock(&mu);
}

/* stub_script_codes sets the per-key answers of the next batch calls. */
void stub_script_codes(const int64_t *c, size_t n) {
    pthread_mutex_lock(&mu);
    ncodes = n < STUB_MAX_KEYS ? n : STUB_MAX_KEYS;
    memcpy(codes, c, ncodes * sizeof codes[0]);
    pthread_mutex_unlock(&mu);
}

void stub_script_health(int rc) {
    pthread_mutex_lock(&mu);
    health_rc = rc;
    pthread_mutex_unlock(&mu);
}

void stub_script_register(int reg, int unreg) {
    pthread_mutex_lock(&mu);
    register_rc = reg;
    unregister_rc = unreg;
    pthread_mutex_unlock(&mu);
}

/* stub_script_remove sets remove's answer; stub_remove_force is the
 * force flag the last remove received. */
void stub_script_remove(int rc) {
    pthread_mutex_lock(&mu);
    remove_rc = rc;
    pthread_mutex_unlock(&mu);
}

int stub_remove_force(void) {
    pthread_mutex_lock(&mu);
    int v = remove_force_seen;
    pthread_mutex_unlock(&mu);
    return v;
}

/* stub_call_log copies the comma-separated call log into out. */
void stub_call_log(char *out, size_t len) {
    pthread_mutex_lock(&mu);
    snprintf(out, len, "%s", call_log);
    pthread_mutex_unlock(&mu);
}

size_t stub_count_seen(void) {
    pthread_mutex_lock(&mu);
    size_t n = count_seen;
    pthread_mutex_unlock(&mu);
    return n;
}

void stub_key_seen(size_t i, char *out, size_t len) {
    pthread_mutex_lock(&mu);
    snprintf(out, len, "%s", i < STUB_MAX_KEYS ? keys_seen[i] : "");
    pthread_mutex_unlock(&mu);
}

/* stub_key_addr: the address of key i (the char* itself) that the last
 * batch call received, so a test can tell which memory crossed. */
uint64_t stub_key_addr(size_t i) {
    pthread_mutex_lock(&mu);
    uint64_t v = i < STUB_MAX_KEYS ? key_addrs_seen[i] : 0;
    pthread_mutex_unlock(&mu);
    return v;
}

/* stub_seen: 0 the buffer address, 1 the size, 2 the sum of the bytes
 * read (puts only) that the last batch call received at index i. */
uint64_t stub_seen(int which, size_t i) {
    pthread_mutex_lock(&mu);
    uint64_t v = 0;
    if (i < STUB_MAX_KEYS) v = which == 0 ? bufs_seen[i] : which == 1 ? sizes_seen[i] : sums_seen[i];
    pthread_mutex_unlock(&mu);
    return v;
}

/* stub_setup_string: 0 local_hostname, 1 metadata_server, 2 protocol,
 * 3 device_name, 4 master_server_addr. */
void stub_setup_string(int which, char *out, size_t len) {
    pthread_mutex_lock(&mu);
    snprintf(out, len, "%s", which >= 0 && which < 5 ? setup_strings[which] : "");
    pthread_mutex_unlock(&mu);
}

/* stub_setup_size: 0 global_segment_size, 1 local_buffer_size. */
uint64_t stub_setup_size(int which) {
    pthread_mutex_lock(&mu);
    uint64_t v = which == 0 || which == 1 ? setup_sizes[which] : 0;
    pthread_mutex_unlock(&mu);
    return v;
}

/* stub_tid: 0 the thread create ran on, 1 the thread setup ran on. */
long stub_tid(int which) {
    pthread_mutex_lock(&mu);
    long v = which == 0 ? create_tid : setup_tid;
    pthread_mutex_unlock(&mu);
    return v;
}

/* stub_registration: 0 the address and 1 the size register_buffer last
 * received, 2 the address unregister_buffer last received. */
uint64_t stub_registration(int which) {
    pthread_mutex_lock(&mu);
    uint64_t v = which == 0 ? registered_addr : which == 1 ? registered_size : unregistered_addr;
    pthread_mutex_unlock(&mu);
    return v;
}

/* stub_replicate: -1 if the last batch_put_from got no replicate config
 * (NULL), else 0 its replica_num, 1 with_soft_pin, 2 with_hard_pin,
 * 3 preferred_segments_count. */
int64_t stub_replicate(int which) {
    pthread_mutex_lock(&mu);
    int64_t v = !replicate_given ? -1 : which >= 0 && which < 4 ? (int64_t)replicate_numbers[which] : 0;
    pthread_mutex_unlock(&mu);
    return v;
}

/* stub_preferred: preferred segment i of the last batch_put_from. */
void stub_preferred(size_t i, char *out, size_t len) {
    pthread_mutex_lock(&mu);
    snprintf(out, len, "%s", i < STUB_MAX_PREFERRED ? preferred_seen[i] : "");
    pthread_mutex_unlock(&mu);
}
