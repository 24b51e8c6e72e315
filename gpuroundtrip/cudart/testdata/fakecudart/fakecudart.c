/*
 * A stand-in for libcudart.so, written for kvshare's tests from the CUDA
 * runtime API's signatures. "Device" memory is host memory the fake hands
 * out and remembers as device memory, so a test on a machine without a
 * GPU can see what crosses the boundary: the addresses, sizes, copy kinds
 * and flags the binding passes, the thread each call runs on, and the
 * errors it turns into text. The fake_* functions at the end of this file
 * script its answers and read back what it saw.
 *
 * Build: gcc -shared -fPIC -o libcudart.so fakecudart.c -lpthread
 * -DFAKE_OMIT_<name> leaves the function <name> out (for the test of a
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
#include <unistd.h>

typedef int cudaError_t;

enum {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInsufficientDriver = 35,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
};

enum { cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2 };

#define FAKE_MAX_ALLOCS 1024
#define FAKE_MAX_CALLS 4096
#define FAKE_LOG_BYTES 65536

/* An allocation the fake made: kind 0 device (cudaMalloc), 1 pinned host
 * (cudaHostAlloc); live until freed. */
struct alloc {
    char *base;
    size_t size;
    int kind;
    int live;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

/* What the test scripted. */
static int device_count = 1;
static int count_error = cudaSuccess;
static char fail_call[64];
static int fail_code;

/* What the fake saw. */
static struct alloc allocs[FAKE_MAX_ALLOCS];
static size_t nallocs;
static long tids[FAKE_MAX_CALLS];
static size_t ncalls;
static char call_log[FAKE_LOG_BYTES];
static int current_device = -1;
static unsigned last_host_flags;
static uint64_t copied[3];

/* enter records a call (its name and thread) and answers the error the
 * test scripted for it, once, or cudaSuccess. Called under mu. */
static cudaError_t enter(const char *name) {
    size_t used = strlen(call_log);
    snprintf(call_log + used, sizeof call_log - used, "%s%s", used ? "," : "", name);
    if (ncalls < FAKE_MAX_CALLS) {
        tids[ncalls++] = (long)syscall(SYS_gettid);
    }
    if (fail_call[0] && strcmp(fail_call, name) == 0) {
        fail_call[0] = 0;
        return fail_code;
    }
    return cudaSuccess;
}

/* find returns the live allocation of kind holding [p, p+n), or NULL. */
static struct alloc *find(const void *p, size_t n, int kind) {
    const char *c = p;
    for (size_t i = 0; i < nallocs; i++) {
        struct alloc *a = &allocs[i];
        if (a->live && a->kind == kind && c >= a->base && c <= a->base + a->size &&
            n <= (size_t)(a->base + a->size - c)) {
            return a;
        }
    }
    return NULL;
}

static cudaError_t remember(void *p, size_t size, int kind) {
    if (nallocs == FAKE_MAX_ALLOCS) {
        free(p);
        return cudaErrorMemoryAllocation;
    }
    allocs[nallocs++] = (struct alloc){p, size, kind, 1};
    return cudaSuccess;
}

static cudaError_t forget(void *p, int kind) {
    if (p == NULL) {
        return cudaSuccess;
    }
    for (size_t i = 0; i < nallocs; i++) {
        if (allocs[i].live && allocs[i].kind == kind && allocs[i].base == p) {
            allocs[i].live = 0;
            free(p);
            return cudaSuccess;
        }
    }
    return cudaErrorInvalidValue;
}

#ifndef FAKE_OMIT_cudaGetDeviceCount
cudaError_t cudaGetDeviceCount(int *count) {
    pthread_mutex_lock(&mu);
    cudaError_t rc = enter("cudaGetDeviceCount");
    if (rc == cudaSuccess) {
        rc = count_error;
    }
    *count = rc == cudaSuccess ? device_count : 0;
    pthread_mutex_unlock(&mu);
    return rc;
}
#endif

#ifndef FAKE_OMIT_cudaSetDevice
cudaError_t cudaSetDevice(int device) {
    pthread_mutex_lock(&mu);
    cudaError_t rc = enter("cudaSetDevice");
    if (rc == cudaSuccess && (device < 0 || device >= device_count)) {
        rc = cudaErrorInvalidDevice;
    }
    if (rc == cudaSuccess) {
        current_device = device;
    }
    pthread_mutex_unlock(&mu);
    return rc;
}
#endif

#ifndef FAKE_OMIT_cudaDeviceGetPCIBusId
cudaError_t cudaDeviceGetPCIBusId(char *bus, int len, int device) {
    pthread_mutex_lock(&mu);
    cudaError_t rc = enter("cudaDeviceGetPCIBusId");
    if (rc == cudaSuccess && (device < 0 || device >= device_count)) {
        rc = cudaErrorInvalidDevice;
    }
    if (rc == cudaSuccess) {
        snprintf(bus, (size_t)len, "0000:%02x:00.0", 0x18 + device);
    }
    pthread_mutex_unlock(&mu);
    return rc;
}
#endif

#ifndef FAKE_OMIT_cudaRuntimeGetVersion
cudaError_t cudaRuntimeGetVersion(int *v) {
    pthread_mutex_lock(&mu);
    cudaError_t rc = enter("cudaRuntimeGetVersion");
    *v = rc == cudaSuccess ? 12080 : 0;
    pthread_mutex_unlock(&mu);
    return rc;
}
#endif

#ifndef FAKE_OMIT_cudaDriverGetVersion
cudaError_t cudaDriverGetVersion(int *v) {
    pthread_mutex_lock(&mu);
    cudaError_t rc = enter("cudaDriverGetVersion");
    *v = rc == cudaSuccess ? 12090 : 0;
    pthread_mutex_unlock(&mu);
    return rc;
}
#endif

#ifndef FAKE_OMIT_cudaMemGetInfo
cudaError_t cudaMemGetInfo(size_t *freeb, size_t *total) {
    pthread_mutex_lock(&mu);
    cudaError_t rc = enter("cudaMemGetInfo");
    *total = (size_t)80 << 30;
    *freeb = *total;
    for (size_t i = 0; i < nallocs; i++) {
        if (allocs[i].live && allocs[i].kind == 0) {
            *freeb -= allocs[i].size;
        }
    }
    pthread_mutex_unlock(&mu);
    return rc;
}
#endif

#ifndef FAKE_OMIT_cudaMalloc
cudaError_t cudaMalloc(void **p, size_t size) {
    pthread_mutex_lock(&mu);
    cudaError_t rc = enter("cudaMalloc");
    *p = NULL;
    if (rc == cudaSuccess && current_device < 0) {
        rc = cudaErrorInvalidDevice; /* the binding selects a device first */
    }
    if (rc == cudaSuccess) {
        *p = malloc(size ? size : 1);
        rc = *p ? remember(*p, size, 0) : cudaErrorMemoryAllocation;
    }
    pthread_mutex_unlock(&mu);
    return rc;
}
#endif

#ifndef FAKE_OMIT_cudaFree
cudaError_t cudaFree(void *p) {
    pthread_mutex_lock(&mu);
    cudaError_t rc = enter("cudaFree");
    if (rc == cudaSuccess) {
        rc = forget(p, 0);
    }
    pthread_mutex_unlock(&mu);
    return rc;
}
#endif

#ifndef FAKE_OMIT_cudaHostAlloc
cudaError_t cudaHostAlloc(void **p, size_t size, unsigned flags) {
    pthread_mutex_lock(&mu);
    cudaError_t rc = enter("cudaHostAlloc");
    *p = NULL;
    last_host_flags = flags;
    if (rc == cudaSuccess) {
        /* Not zeroed, as real pinned memory is not: fill with 0xa5. */
        *p = malloc(size ? size : 1);
        if (*p) {
            memset(*p, 0xa5, size);
        }
        rc = *p ? remember(*p, size, 1) : cudaErrorMemoryAllocation;
    }
    pthread_mutex_unlock(&mu);
    return rc;
}
#endif

#ifndef FAKE_OMIT_cudaFreeHost
cudaError_t cudaFreeHost(void *p) {
    pthread_mutex_lock(&mu);
    cudaError_t rc = enter("cudaFreeHost");
    if (rc == cudaSuccess) {
        rc = forget(p, 1);
    }
    pthread_mutex_unlock(&mu);
    return rc;
}
#endif

#ifndef FAKE_OMIT_cudaMemcpy
/* cudaMemcpy checks what the real one would fault on: the device side
 * must lie inside one live device allocation, the host side must not be
 * device memory. */
cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, int kind) {
    pthread_mutex_lock(&mu);
    cudaError_t rc = enter("cudaMemcpy");
    if (rc == cudaSuccess) {
        switch (kind) {
        case cudaMemcpyHostToDevice:
            if (!find(dst, n, 0) || find(src, 0, 0)) {
                rc = cudaErrorInvalidValue;
            }
            break;
        case cudaMemcpyDeviceToHost:
            if (!find(src, n, 0) || find(dst, 0, 0)) {
                rc = cudaErrorInvalidValue;
            }
            break;
        default:
            rc = cudaErrorInvalidValue;
        }
    }
    if (rc == cudaSuccess) {
        memcpy(dst, src, n);
        copied[kind] += n;
    }
    pthread_mutex_unlock(&mu);
    return rc;
}
#endif

#ifndef FAKE_OMIT_cudaDeviceSynchronize
cudaError_t cudaDeviceSynchronize(void) {
    pthread_mutex_lock(&mu);
    cudaError_t rc = enter("cudaDeviceSynchronize");
    pthread_mutex_unlock(&mu);
    return rc;
}
#endif

#ifndef FAKE_OMIT_cudaGetErrorName
const char *cudaGetErrorName(cudaError_t e) {
    switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInsufficientDriver: return "cudaErrorInsufficientDriver";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    }
    return "cudaErrorUnknown";
}
#endif

#ifndef FAKE_OMIT_cudaGetErrorString
const char *cudaGetErrorString(cudaError_t e) {
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInsufficientDriver: return "CUDA driver version is insufficient for CUDA runtime version";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    }
    return "unknown error";
}
#endif

/* ---- the test's side: scripting and reading back ---- */

/* fake_set_devices sets how many devices cudaGetDeviceCount reports, or
 * the error it answers (then it reports 0). */
void fake_set_devices(int n, int err) {
    pthread_mutex_lock(&mu);
    device_count = n;
    count_error = err;
    pthread_mutex_unlock(&mu);
}

/* fake_fail makes the next call of the named function answer code. */
void fake_fail(const char *name, int code) {
    pthread_mutex_lock(&mu);
    snprintf(fail_call, sizeof fail_call, "%s", name);
    fail_code = code;
    pthread_mutex_unlock(&mu);
}

/* fake_call_log copies the names of every call so far, comma-separated. */
void fake_call_log(char *out, size_t n) {
    pthread_mutex_lock(&mu);
    snprintf(out, n, "%s", call_log);
    pthread_mutex_unlock(&mu);
}

/* fake_tids copies up to n calls' thread ids and returns the count. */
size_t fake_tids(long *out, size_t n) {
    pthread_mutex_lock(&mu);
    size_t k = ncalls < n ? ncalls : n;
    memcpy(out, tids, k * sizeof *out);
    pthread_mutex_unlock(&mu);
    return k;
}

/* fake_live counts the live allocations of a kind (0 device, 1 host). */
int fake_live(int kind) {
    pthread_mutex_lock(&mu);
    int n = 0;
    for (size_t i = 0; i < nallocs; i++) {
        n += allocs[i].live && allocs[i].kind == kind;
    }
    pthread_mutex_unlock(&mu);
    return n;
}

/* fake_is_alloc says whether [p, p+n) lies in a live allocation of kind. */
int fake_is_alloc(uint64_t p, uint64_t n, int kind) {
    pthread_mutex_lock(&mu);
    int ok = find((const void *)(uintptr_t)p, (size_t)n, kind) != NULL;
    pthread_mutex_unlock(&mu);
    return ok;
}

int fake_current_device(void) {
    pthread_mutex_lock(&mu);
    int d = current_device;
    pthread_mutex_unlock(&mu);
    return d;
}

unsigned fake_host_flags(void) {
    pthread_mutex_lock(&mu);
    unsigned f = last_host_flags;
    pthread_mutex_unlock(&mu);
    return f;
}

/* fake_copied returns the bytes copied in a direction (1 H2D, 2 D2H). */
uint64_t fake_copied(int kind) {
    pthread_mutex_lock(&mu);
    uint64_t n = kind == 1 || kind == 2 ? copied[kind] : 0;
    pthread_mutex_unlock(&mu);
    return n;
}
