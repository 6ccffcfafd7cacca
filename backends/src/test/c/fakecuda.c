/*
 * A fake CUDA driver for testing Keel's CUDA backend on machines without a GPU.
 *
 * Compiled against the real cuda.h, so every exported symbol carries the name and the
 * prototype the real libcuda.so.1 exports (cuMemGetInfo is cuMemGetInfo_v2, and so on).
 * "Device memory" is host memory:
 *   cuMemAddressReserve  mmap(PROT_NONE, MAP_PRIVATE|MAP_ANONYMOUS|MAP_NORESERVE), aligned
 *   cuMemCreate          memfd_create + ftruncate: a physical allocation with no address
 *   cuMemMap             mmap(MAP_SHARED|MAP_FIXED) of that fd over the reservation, PROT_NONE
 *   cuMemSetAccess       mprotect(PROT_READ|PROT_WRITE)
 *   cuMemUnmap           mmap(PROT_NONE, MAP_FIXED|MAP_NORESERVE) to restore the reservation
 *   cuMemRelease         close the fd once the handle is released and no longer mapped
 *   cuMemAddressFree     munmap, refused while anything is still mapped inside
 *
 * Every argument is checked. A bad one makes the call fail with CUDA_ERROR_INVALID_VALUE (or
 * the specific error the driver documents) and is counted as a "violation" with a message;
 * tests assert fake_violations() == 0 after correct use, so the Java side cannot pass a wrong
 * argument unnoticed. The fake is stricter than the driver in one way: it requires cuMemMap,
 * cuMemSetAccess and cuMemUnmap to cover exactly one whole allocation, which is all Keel does.
 *
 * Failure injection: fake_fail_at("cuMemMap", n, code) makes the n-th next call of cuMemMap
 * return code without doing anything. fake_reset() returns the fake to its initial state.
 * Layout exports: fake_sizeof_* and fake_offsetof_* give the C compiler's view of the structs.
 */
#define _GNU_SOURCE
#include <cuda.h>

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_HANDLES 4096
#define MAX_MAPPINGS 4096
#define MAX_RESERVES 256
#define MAX_RULES 32
#define HANDLE_TAG 0x6b65656c00000000ULL /* "keel" in the high bits: garbage handles are caught */

/* ---- layouts and constants as the C compiler sees them ---- */
const size_t fake_sizeof_CUmemLocation = sizeof(CUmemLocation);
const size_t fake_offsetof_CUmemLocation_id = offsetof(CUmemLocation, id);
const size_t fake_sizeof_CUmemAllocationProp = sizeof(CUmemAllocationProp);
const size_t fake_offsetof_CUmemAllocationProp_requestedHandleTypes = offsetof(CUmemAllocationProp, requestedHandleTypes);
const size_t fake_offsetof_CUmemAllocationProp_location = offsetof(CUmemAllocationProp, location);
const size_t fake_offsetof_CUmemAllocationProp_win32HandleMetaData = offsetof(CUmemAllocationProp, win32HandleMetaData);
const size_t fake_offsetof_CUmemAllocationProp_allocFlags = offsetof(CUmemAllocationProp, allocFlags);
const size_t fake_offsetof_CUmemAllocationProp_allocFlags_usage = offsetof(CUmemAllocationProp, allocFlags.usage);
const size_t fake_offsetof_CUmemAllocationProp_allocFlags_reserved = offsetof(CUmemAllocationProp, allocFlags.reserved);
const size_t fake_sizeof_CUmemAccessDesc = sizeof(CUmemAccessDesc);
const size_t fake_offsetof_CUmemAccessDesc_flags = offsetof(CUmemAccessDesc, flags);
const int fake_CU_MEM_ALLOCATION_TYPE_PINNED = CU_MEM_ALLOCATION_TYPE_PINNED;
const int fake_CU_MEM_HANDLE_TYPE_NONE = CU_MEM_HANDLE_TYPE_NONE;
const int fake_CU_MEM_LOCATION_TYPE_DEVICE = CU_MEM_LOCATION_TYPE_DEVICE;
const int fake_CU_MEM_ACCESS_FLAGS_PROT_READWRITE = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
const int fake_CU_MEM_ALLOC_GRANULARITY_MINIMUM = CU_MEM_ALLOC_GRANULARITY_MINIMUM;
const int fake_CU_MEM_ALLOC_GRANULARITY_RECOMMENDED = CU_MEM_ALLOC_GRANULARITY_RECOMMENDED;
const int fake_CUDA_VERSION = CUDA_VERSION;

/* ---- state, all under one mutex ---- */
struct handle { int used; int fd; size_t size; int maps; int released; };
struct mapping { int used; CUdeviceptr ptr; size_t size; int handle; int accessible; };
struct reserve { int used; CUdeviceptr ptr; size_t size; };
struct rule { char name[64]; int countdown; CUresult code; };
struct counter { char name[64]; long calls; };
struct CUctx_st { int device; };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct CUctx_st primary = {0};
static __thread CUcontext current;
static int initialized, context_refs;
static size_t granularity_minimum = 2u << 20, granularity_recommended = 2u << 20;
static size_t capacity = 1u << 30, physical_used;
static struct handle handles[MAX_HANDLES];
static struct mapping mappings[MAX_MAPPINGS];
static struct reserve reserves[MAX_RESERVES];
static struct rule rules[MAX_RULES];
static struct counter counters[64];
static long violations;
static char last_violation[512];

static CUresult violation(CUresult code, const char *call, const char *what) {
    violations++;
    snprintf(last_violation, sizeof last_violation, "%s: %s", call, what);
    return code;
}

/* Counts the call and returns the injected result, or CUDA_SUCCESS to go on. */
static CUresult enter(const char *call) {
    int i;
    for (i = 0; i < 64; i++) {
        if (counters[i].name[0] == 0) { snprintf(counters[i].name, sizeof counters[i].name, "%s", call); }
        if (strcmp(counters[i].name, call) == 0) { counters[i].calls++; break; }
    }
    for (i = 0; i < MAX_RULES; i++) {
        if (rules[i].countdown > 0 && strcmp(rules[i].name, call) == 0 && --rules[i].countdown == 0) {
            return rules[i].code;
        }
    }
    return CUDA_SUCCESS;
}

static CUresult ready(const char *call) {
    if (!initialized) return violation(CUDA_ERROR_NOT_INITIALIZED, call, "cuInit was not called");
    return CUDA_SUCCESS;
}

static CUresult context_current(const char *call) {
    if (!initialized) return violation(CUDA_ERROR_NOT_INITIALIZED, call, "cuInit was not called");
    if (current != &primary || context_refs == 0)
        return violation(CUDA_ERROR_INVALID_CONTEXT, call, "no retained context is current on this thread");
    return CUDA_SUCCESS;
}

#define BEGIN(call) CUresult r_; pthread_mutex_lock(&lock); r_ = enter(call); if (r_ != CUDA_SUCCESS) goto done_
#define CHECK(expr) do { r_ = (expr); if (r_ != CUDA_SUCCESS) goto done_; } while (0)
#define REQUIRE(cond, call, what) do { if (!(cond)) { r_ = violation(CUDA_ERROR_INVALID_VALUE, call, what); goto done_; } } while (0)
#define END done_: pthread_mutex_unlock(&lock); return r_

static int valid_location(const CUmemLocation *location) {
    return location->type == CU_MEM_LOCATION_TYPE_DEVICE && location->id == primary.device;
}

static const char *invalid_prop(const CUmemAllocationProp *prop) {
    static const unsigned char zero[4];
    if (prop == NULL) return "prop is NULL";
    if (prop->type != CU_MEM_ALLOCATION_TYPE_PINNED) return "prop->type is not CU_MEM_ALLOCATION_TYPE_PINNED";
    if (prop->requestedHandleTypes != CU_MEM_HANDLE_TYPE_NONE) return "prop->requestedHandleTypes is not NONE";
    if (!valid_location(&prop->location)) return "prop->location is not device 0";
    if (prop->win32HandleMetaData != NULL) return "prop->win32HandleMetaData is not NULL";
    if (prop->allocFlags.compressionType || prop->allocFlags.gpuDirectRDMACapable || prop->allocFlags.usage
            || memcmp(prop->allocFlags.reserved, zero, 4) != 0)
        return "prop->allocFlags is not zero";
    return NULL;
}

static int is_granular(size_t value) { return value > 0 && value % granularity_minimum == 0; }

static struct handle *find_handle(CUmemGenericAllocationHandle h) {
    uint64_t index = h - HANDLE_TAG;
    if ((h & ~0xffffffffULL) != HANDLE_TAG || index >= MAX_HANDLES || !handles[index].used) return NULL;
    return &handles[index];
}

static struct mapping *find_mapping(CUdeviceptr ptr, size_t size) {
    for (int i = 0; i < MAX_MAPPINGS; i++)
        if (mappings[i].used && mappings[i].ptr == ptr && mappings[i].size == size) return &mappings[i];
    return NULL;
}

static struct reserve *reserve_containing(CUdeviceptr ptr, size_t size) {
    for (int i = 0; i < MAX_RESERVES; i++)
        if (reserves[i].used && ptr >= reserves[i].ptr && ptr + size <= reserves[i].ptr + reserves[i].size)
            return &reserves[i];
    return NULL;
}

static int overlaps_mapping(CUdeviceptr ptr, size_t size) {
    for (int i = 0; i < MAX_MAPPINGS; i++)
        if (mappings[i].used && ptr < mappings[i].ptr + mappings[i].size && mappings[i].ptr < ptr + size) return 1;
    return 0;
}

static void drop_handle_if_done(struct handle *h) {
    if (h->released && h->maps == 0) {
        close(h->fd);
        physical_used -= h->size;
        memset(h, 0, sizeof *h);
    }
}

/* ---- the driver API ---- */

CUresult CUDAAPI cuInit(unsigned int flags) {
    BEGIN("cuInit");
    REQUIRE(flags == 0, "cuInit", "flags must be 0");
    initialized = 1;
    END;
}

CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal) {
    BEGIN("cuDeviceGet");
    CHECK(ready("cuDeviceGet"));
    REQUIRE(device != NULL, "cuDeviceGet", "device is NULL");
    if (ordinal != 0) { r_ = CUDA_ERROR_INVALID_DEVICE; goto done_; } /* one device: not a violation */
    *device = 0;
    END;
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev) {
    BEGIN("cuDevicePrimaryCtxRetain");
    CHECK(ready("cuDevicePrimaryCtxRetain"));
    REQUIRE(pctx != NULL, "cuDevicePrimaryCtxRetain", "pctx is NULL");
    if (dev != 0) { r_ = violation(CUDA_ERROR_INVALID_DEVICE, "cuDevicePrimaryCtxRetain", "dev is not 0"); goto done_; }
    context_refs++;
    *pctx = &primary;
    END;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev) {
    BEGIN("cuDevicePrimaryCtxRelease_v2");
    CHECK(ready("cuDevicePrimaryCtxRelease_v2"));
    if (dev != 0) { r_ = violation(CUDA_ERROR_INVALID_DEVICE, "cuDevicePrimaryCtxRelease_v2", "dev is not 0"); goto done_; }
    if (context_refs == 0) {
        r_ = violation(CUDA_ERROR_INVALID_CONTEXT, "cuDevicePrimaryCtxRelease_v2", "released more often than retained");
        goto done_;
    }
    context_refs--;
    END;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx) {
    BEGIN("cuCtxSetCurrent");
    CHECK(ready("cuCtxSetCurrent"));
    if (ctx != NULL && (ctx != &primary || context_refs == 0)) {
        r_ = violation(CUDA_ERROR_INVALID_CONTEXT, "cuCtxSetCurrent", "ctx is not a retained context");
        goto done_;
    }
    current = ctx;
    END;
}

CUresult CUDAAPI cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                                               CUmemAllocationGranularity_flags option) {
    const char *bad;
    BEGIN("cuMemGetAllocationGranularity");
    CHECK(ready("cuMemGetAllocationGranularity"));
    REQUIRE(granularity != NULL, "cuMemGetAllocationGranularity", "granularity is NULL");
    bad = invalid_prop(prop);
    REQUIRE(bad == NULL, "cuMemGetAllocationGranularity", bad);
    REQUIRE(option == CU_MEM_ALLOC_GRANULARITY_MINIMUM || option == CU_MEM_ALLOC_GRANULARITY_RECOMMENDED,
            "cuMemGetAllocationGranularity", "option is neither MINIMUM nor RECOMMENDED");
    *granularity = option == CU_MEM_ALLOC_GRANULARITY_MINIMUM ? granularity_minimum : granularity_recommended;
    END;
}

CUresult CUDAAPI cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                     unsigned long long flags) {
    int slot = -1;
    BEGIN("cuMemAddressReserve");
    CHECK(context_current("cuMemAddressReserve"));
    REQUIRE(ptr != NULL, "cuMemAddressReserve", "ptr is NULL");
    REQUIRE(is_granular(size), "cuMemAddressReserve", "size is not a positive multiple of the granularity");
    REQUIRE(alignment == 0 || (alignment & (alignment - 1)) == 0, "cuMemAddressReserve", "alignment is not a power of two");
    REQUIRE(addr == 0 && flags == 0, "cuMemAddressReserve", "addr and flags must be 0");
    for (int i = 0; i < MAX_RESERVES && slot < 0; i++) if (!reserves[i].used) slot = i;
    if (slot < 0) { r_ = CUDA_ERROR_OUT_OF_MEMORY; goto done_; }
    {
        size_t align = alignment > granularity_minimum ? alignment : granularity_minimum;
        size_t padded = size + align;
        char *raw = mmap(NULL, padded, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (raw == MAP_FAILED) { r_ = CUDA_ERROR_OUT_OF_MEMORY; goto done_; }
        uintptr_t base = ((uintptr_t) raw + align - 1) & ~(uintptr_t) (align - 1);
        if (base > (uintptr_t) raw) munmap(raw, base - (uintptr_t) raw);
        munmap((char *) base + size, (uintptr_t) raw + padded - (base + size));
        reserves[slot] = (struct reserve) {1, (CUdeviceptr) base, size};
        *ptr = (CUdeviceptr) base;
    }
    END;
}

CUresult CUDAAPI cuMemAddressFree(CUdeviceptr ptr, size_t size) {
    struct reserve *range = NULL;
    BEGIN("cuMemAddressFree");
    CHECK(context_current("cuMemAddressFree"));
    for (int i = 0; i < MAX_RESERVES; i++)
        if (reserves[i].used && reserves[i].ptr == ptr && reserves[i].size == size) range = &reserves[i];
    REQUIRE(range != NULL, "cuMemAddressFree", "ptr and size do not name a reservation");
    REQUIRE(!overlaps_mapping(ptr, size), "cuMemAddressFree", "the range still has mappings");
    munmap((void *) ptr, size);
    memset(range, 0, sizeof *range);
    END;
}

CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
                             unsigned long long flags) {
    const char *bad;
    int slot = -1, fd;
    BEGIN("cuMemCreate");
    CHECK(context_current("cuMemCreate"));
    REQUIRE(handle != NULL, "cuMemCreate", "handle is NULL");
    REQUIRE(is_granular(size), "cuMemCreate", "size is not a positive multiple of the granularity");
    bad = invalid_prop(prop);
    REQUIRE(bad == NULL, "cuMemCreate", bad);
    REQUIRE(flags == 0, "cuMemCreate", "flags must be 0");
    if (size > capacity - physical_used) { r_ = CUDA_ERROR_OUT_OF_MEMORY; goto done_; }
    for (int i = 0; i < MAX_HANDLES && slot < 0; i++) if (!handles[i].used) slot = i;
    if (slot < 0) { r_ = CUDA_ERROR_OUT_OF_MEMORY; goto done_; }
    fd = memfd_create("fakecuda", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t) size) != 0) {
        if (fd >= 0) close(fd);
        r_ = CUDA_ERROR_OUT_OF_MEMORY;
        goto done_;
    }
    handles[slot] = (struct handle) {1, fd, size, 0, 0};
    physical_used += size;
    *handle = HANDLE_TAG + (CUmemGenericAllocationHandle) slot;
    END;
}

CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle) {
    struct handle *h;
    BEGIN("cuMemRelease");
    CHECK(context_current("cuMemRelease"));
    h = find_handle(handle);
    REQUIRE(h != NULL && !h->released, "cuMemRelease", "handle is unknown or already released");
    h->released = 1;
    drop_handle_if_done(h);
    END;
}

CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                          unsigned long long flags) {
    struct handle *h;
    int slot = -1;
    BEGIN("cuMemMap");
    CHECK(context_current("cuMemMap"));
    h = find_handle(handle);
    REQUIRE(h != NULL && !h->released, "cuMemMap", "handle is unknown or released");
    REQUIRE(offset == 0 && flags == 0, "cuMemMap", "offset and flags must be 0");
    REQUIRE(size == h->size, "cuMemMap", "size differs from the allocation's size");
    REQUIRE(ptr % granularity_minimum == 0, "cuMemMap", "ptr is not aligned to the granularity");
    REQUIRE(reserve_containing(ptr, size) != NULL, "cuMemMap", "the range is not inside one reservation");
    REQUIRE(!overlaps_mapping(ptr, size), "cuMemMap", "the range is already mapped");
    for (int i = 0; i < MAX_MAPPINGS && slot < 0; i++) if (!mappings[i].used) slot = i;
    if (slot < 0) { r_ = CUDA_ERROR_OUT_OF_MEMORY; goto done_; }
    if (mmap((void *) ptr, size, PROT_NONE, MAP_SHARED | MAP_FIXED, h->fd, 0) == MAP_FAILED) {
        r_ = CUDA_ERROR_OUT_OF_MEMORY;
        goto done_;
    }
    mappings[slot] = (struct mapping) {1, ptr, size, (int) (h - handles), 0};
    h->maps++;
    END;
}

CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size) {
    struct mapping *m;
    BEGIN("cuMemUnmap");
    CHECK(context_current("cuMemUnmap"));
    m = find_mapping(ptr, size);
    REQUIRE(m != NULL, "cuMemUnmap", "ptr and size do not name a mapping");
    mmap((void *) ptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    handles[m->handle].maps--;
    drop_handle_if_done(&handles[m->handle]);
    memset(m, 0, sizeof *m);
    END;
}

CUresult CUDAAPI cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count) {
    struct mapping *m;
    BEGIN("cuMemSetAccess");
    CHECK(context_current("cuMemSetAccess"));
    m = find_mapping(ptr, size);
    REQUIRE(m != NULL, "cuMemSetAccess", "ptr and size do not name a mapping");
    REQUIRE(desc != NULL && count == 1, "cuMemSetAccess", "expected exactly one descriptor");
    REQUIRE(valid_location(&desc->location), "cuMemSetAccess", "desc->location is not device 0");
    REQUIRE(desc->flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE, "cuMemSetAccess", "desc->flags is not PROT_READWRITE");
    mprotect((void *) ptr, size, PROT_READ | PROT_WRITE);
    m->accessible = 1;
    END;
}

static struct mapping *accessible_mapping_containing(CUdeviceptr ptr, size_t bytes) {
    for (int i = 0; i < MAX_MAPPINGS; i++)
        if (mappings[i].used && mappings[i].accessible && ptr >= mappings[i].ptr
                && ptr + bytes <= mappings[i].ptr + mappings[i].size)
            return &mappings[i];
    return NULL;
}

CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t bytes) {
    BEGIN("cuMemcpyHtoD_v2");
    CHECK(context_current("cuMemcpyHtoD_v2"));
    REQUIRE(src != NULL, "cuMemcpyHtoD_v2", "src is NULL");
    if (accessible_mapping_containing(dst, bytes) == NULL) {
        r_ = violation(CUDA_ERROR_INVALID_VALUE, "cuMemcpyHtoD_v2", "dst is not accessible device memory");
        goto done_;
    }
    memcpy((void *) dst, src, bytes);
    END;
}

CUresult CUDAAPI cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t bytes) {
    BEGIN("cuMemcpyDtoH_v2");
    CHECK(context_current("cuMemcpyDtoH_v2"));
    REQUIRE(dst != NULL, "cuMemcpyDtoH_v2", "dst is NULL");
    if (accessible_mapping_containing(src, bytes) == NULL) {
        r_ = violation(CUDA_ERROR_INVALID_VALUE, "cuMemcpyDtoH_v2", "src is not accessible device memory");
        goto done_;
    }
    memcpy(dst, (const void *) src, bytes);
    END;
}

CUresult CUDAAPI cuMemGetInfo(size_t *free, size_t *total) {
    BEGIN("cuMemGetInfo_v2");
    CHECK(context_current("cuMemGetInfo_v2"));
    REQUIRE(free != NULL && total != NULL, "cuMemGetInfo_v2", "free or total is NULL");
    *free = capacity - physical_used;
    *total = capacity;
    END;
}

static const char *error_text(CUresult code, int name) {
    switch (code) {
    case CUDA_SUCCESS: return name ? "CUDA_SUCCESS" : "no error";
    case CUDA_ERROR_INVALID_VALUE: return name ? "CUDA_ERROR_INVALID_VALUE" : "invalid argument";
    case CUDA_ERROR_OUT_OF_MEMORY: return name ? "CUDA_ERROR_OUT_OF_MEMORY" : "out of memory";
    case CUDA_ERROR_NOT_INITIALIZED: return name ? "CUDA_ERROR_NOT_INITIALIZED" : "initialization error";
    case CUDA_ERROR_NO_DEVICE: return name ? "CUDA_ERROR_NO_DEVICE" : "no CUDA-capable device is detected";
    case CUDA_ERROR_INVALID_DEVICE: return name ? "CUDA_ERROR_INVALID_DEVICE" : "invalid device ordinal";
    case CUDA_ERROR_INVALID_CONTEXT: return name ? "CUDA_ERROR_INVALID_CONTEXT" : "invalid device context";
    case CUDA_ERROR_INVALID_HANDLE: return name ? "CUDA_ERROR_INVALID_HANDLE" : "invalid resource handle";
    case CUDA_ERROR_ILLEGAL_ADDRESS: return name ? "CUDA_ERROR_ILLEGAL_ADDRESS" : "an illegal memory access was encountered";
    case CUDA_ERROR_UNKNOWN: return name ? "CUDA_ERROR_UNKNOWN" : "unknown error";
    default: return NULL;
    }
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char **pStr) {
    if (pStr == NULL) return CUDA_ERROR_INVALID_VALUE;
    *pStr = error_text(error, 1);
    return *pStr == NULL ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char **pStr) {
    if (pStr == NULL) return CUDA_ERROR_INVALID_VALUE;
    *pStr = error_text(error, 0);
    return *pStr == NULL ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

/* ---- test controls ---- */

void fake_reset(void) {
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_MAPPINGS; i++) if (mappings[i].used) munmap((void *) mappings[i].ptr, mappings[i].size);
    for (int i = 0; i < MAX_RESERVES; i++) if (reserves[i].used) munmap((void *) reserves[i].ptr, reserves[i].size);
    for (int i = 0; i < MAX_HANDLES; i++) if (handles[i].used) close(handles[i].fd);
    memset(mappings, 0, sizeof mappings);
    memset(reserves, 0, sizeof reserves);
    memset(handles, 0, sizeof handles);
    memset(rules, 0, sizeof rules);
    memset(counters, 0, sizeof counters);
    initialized = context_refs = 0;
    physical_used = 0;
    capacity = 1u << 30;
    granularity_minimum = granularity_recommended = 2u << 20;
    violations = 0;
    last_violation[0] = 0;
    pthread_mutex_unlock(&lock);
}

void fake_fail_at(const char *call, int nth, int code) {
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_RULES; i++) {
        if (rules[i].countdown == 0) {
            snprintf(rules[i].name, sizeof rules[i].name, "%s", call);
            rules[i].countdown = nth;
            rules[i].code = (CUresult) code;
            break;
        }
    }
    pthread_mutex_unlock(&lock);
}

void fake_set_granularity(size_t minimum, size_t recommended) {
    pthread_mutex_lock(&lock);
    granularity_minimum = minimum;
    granularity_recommended = recommended;
    pthread_mutex_unlock(&lock);
}

void fake_set_capacity(size_t bytes) {
    pthread_mutex_lock(&lock);
    capacity = bytes;
    pthread_mutex_unlock(&lock);
}

static long count(int what) {
    long n = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_HANDLES && what == 0; i++) n += handles[i].used;
    for (int i = 0; i < MAX_MAPPINGS && what == 1; i++) n += mappings[i].used;
    for (int i = 0; i < MAX_RESERVES && what == 2; i++) n += reserves[i].used;
    if (what == 3) n = context_refs;
    if (what == 4) n = (long) physical_used;
    if (what == 5) n = violations;
    pthread_mutex_unlock(&lock);
    return n;
}

long fake_live_handles(void) { return count(0); }
long fake_live_mappings(void) { return count(1); }
long fake_live_reservations(void) { return count(2); }
long fake_context_refs(void) { return count(3); }
long fake_physical_used(void) { return count(4); }
long fake_violations(void) { return count(5); }
const char *fake_last_violation(void) { return last_violation; }

long fake_calls(const char *call) {
    long n = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < 64; i++) if (strcmp(counters[i].name, call) == 0) n = counters[i].calls;
    pthread_mutex_unlock(&lock);
    return n;
}
