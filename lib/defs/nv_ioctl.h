// The escape (ioctl) interface of the NVIDIA kernel driver: /dev/nvidiactl and
// /dev/nvidiaN escapes and the NVOSxx parameter blocks of the RM API, with the
// allocation flag fields they carry. Facts from open-gpu-kernel-modules 580.142:
// kernel-open/common/inc/nv-ioctl{,-numbers}.h, src/nvidia/arch/nvalloc/unix/include/
// nv_escape.h and nv-unix-nvos-params-wrappers.h, src/common/sdk/nvidia/inc/nvos.h.
#pragma once

#include <cstddef>
#include <cstdint>

#include "defs/bits.h"

namespace nvl::nv {

// The ioctl "magic" and escape numbers of /dev/nvidiactl and /dev/nvidiaN (nv-ioctl-numbers.h).
inline constexpr uint32_t NV_IOCTL_MAGIC = 'F';
inline constexpr uint32_t NV_IOCTL_BASE = 200;
inline constexpr uint32_t NV_ESC_CARD_INFO = NV_IOCTL_BASE + 0;
inline constexpr uint32_t NV_ESC_REGISTER_FD = NV_IOCTL_BASE + 1;
inline constexpr uint32_t NV_ESC_ALLOC_OS_EVENT = NV_IOCTL_BASE + 6;
inline constexpr uint32_t NV_ESC_FREE_OS_EVENT = NV_IOCTL_BASE + 7;
inline constexpr uint32_t NV_ESC_STATUS_CODE = NV_IOCTL_BASE + 9;
inline constexpr uint32_t NV_ESC_CHECK_VERSION_STR = NV_IOCTL_BASE + 10;
inline constexpr uint32_t NV_ESC_IOCTL_XFER_CMD = NV_IOCTL_BASE + 11;
inline constexpr uint32_t NV_ESC_SYS_PARAMS = NV_IOCTL_BASE + 14;

// Resource-manager escapes (nv_escape.h); each takes the NVOSxx_PARAMETERS named below.
inline constexpr uint32_t NV_ESC_RM_ALLOC_MEMORY = 0x27;  // NVOS02 (nv_ioctl_nvos02_parameters_with_fd)
inline constexpr uint32_t NV_ESC_RM_FREE = 0x29;  // NVOS00
inline constexpr uint32_t NV_ESC_RM_CONTROL = 0x2A;  // NVOS54
inline constexpr uint32_t NV_ESC_RM_ALLOC = 0x2B;  // NVOS21 or NVOS64
inline constexpr uint32_t NV_ESC_RM_MAP_MEMORY = 0x4E;  // NVOS33 (nv_ioctl_nvos33_parameters_with_fd)
inline constexpr uint32_t NV_ESC_RM_UNMAP_MEMORY = 0x4F;  // NVOS34
inline constexpr uint32_t NV_ESC_RM_MAP_MEMORY_DMA = 0x57;  // NVOS46
inline constexpr uint32_t NV_ESC_RM_UNMAP_MEMORY_DMA = 0x58;  // NVOS47

// The request number for ioctl(): _IOWR('F', escape, size) as Linux builds it
// (direction read|write in bits 31:30, a 14-bit size in 29:16, type, number).
// Parameter blocks over 16383 bytes go through NV_ESC_IOCTL_XFER_CMD instead.
constexpr unsigned long nvIoctlRequest(uint32_t escape, uint32_t size) {
    return (3ul << 30) | (static_cast<unsigned long>(size & 0x3FFFu) << 16) |
           (static_cast<unsigned long>(NV_IOCTL_MAGIC) << 8) | (escape & 0xFFu);
}
static_assert(nvIoctlRequest(NV_ESC_RM_CONTROL, 32) == 0xC020462Aul);

// NV_ESC_IOCTL_XFER_CMD: carries the real escape, size and pointer for big blocks.
struct nv_ioctl_xfer_t {
    uint32_t cmd;
    uint32_t size;
    alignas(8) uint64_t ptr;
};
static_assert(sizeof(nv_ioctl_xfer_t) == 16);
static_assert(offsetof(nv_ioctl_xfer_t, ptr) == 8);

// NV_ESC_CARD_INFO: one entry per probed GPU (the caller passes an array).
struct nv_pci_info_t {
    uint32_t domain;
    uint8_t bus;
    uint8_t slot;
    uint8_t function;
    uint16_t vendor_id;
    uint16_t device_id;
};
static_assert(sizeof(nv_pci_info_t) == 12);
static_assert(offsetof(nv_pci_info_t, vendor_id) == 8);
static_assert(offsetof(nv_pci_info_t, device_id) == 10);

struct nv_ioctl_card_info_t {
    uint8_t valid;
    nv_pci_info_t pci_info;
    uint32_t gpu_id;
    uint16_t interrupt_line;
    alignas(8) uint64_t reg_address;
    alignas(8) uint64_t reg_size;
    alignas(8) uint64_t fb_address;
    alignas(8) uint64_t fb_size;
    uint32_t minor_number;
    uint8_t dev_name[10];
};
static_assert(sizeof(nv_ioctl_card_info_t) == 72);
static_assert(offsetof(nv_ioctl_card_info_t, pci_info) == 4);
static_assert(offsetof(nv_ioctl_card_info_t, reg_address) == 24);
static_assert(offsetof(nv_ioctl_card_info_t, reg_size) == 32);
static_assert(offsetof(nv_ioctl_card_info_t, fb_address) == 40);
static_assert(offsetof(nv_ioctl_card_info_t, fb_size) == 48);
static_assert(offsetof(nv_ioctl_card_info_t, dev_name) == 60);

// NV_ESC_REGISTER_FD on /dev/nvidiaN: ties the device fd to the control fd.
struct nv_ioctl_register_fd_t {
    int32_t ctl_fd;
};
static_assert(sizeof(nv_ioctl_register_fd_t) == 4);
static_assert(offsetof(nv_ioctl_register_fd_t, ctl_fd) == 0);

// NV_ESC_ALLOC_OS_EVENT / NV_ESC_FREE_OS_EVENT: an fd that RM events signal.
struct nv_ioctl_alloc_os_event_t {
    uint32_t hClient;
    uint32_t hDevice;
    uint32_t fd;
    uint32_t Status;
};
static_assert(sizeof(nv_ioctl_alloc_os_event_t) == 16);
static_assert(offsetof(nv_ioctl_alloc_os_event_t, Status) == 12);

struct nv_ioctl_free_os_event_t {
    uint32_t hClient;
    uint32_t hDevice;
    uint32_t fd;
    uint32_t Status;
};
static_assert(sizeof(nv_ioctl_free_os_event_t) == 16);
static_assert(offsetof(nv_ioctl_free_os_event_t, Status) == 12);

// NV_ESC_STATUS_CODE: the driver's status of one GPU, by PCI location.
struct nv_ioctl_status_code_t {
    uint32_t domain;
    uint8_t bus;
    uint8_t slot;
    uint32_t status;
};
static_assert(sizeof(nv_ioctl_status_code_t) == 12);
static_assert(offsetof(nv_ioctl_status_code_t, status) == 8);

// NV_ESC_SYS_PARAMS: system facts the kernel driver may use.
struct nv_ioctl_sys_params_t {
    alignas(8) uint64_t memblock_size;
};
static_assert(sizeof(nv_ioctl_sys_params_t) == 8);
static_assert(offsetof(nv_ioctl_sys_params_t, memblock_size) == 0);

// NV_ESC_CHECK_VERSION_STR: user space and kernel must agree on the version string.
inline constexpr uint32_t NV_RM_API_VERSION_STRING_LENGTH = 64;
inline constexpr uint32_t NV_RM_API_VERSION_CMD_QUERY = '2';
inline constexpr uint32_t NV_RM_API_VERSION_REPLY_RECOGNIZED = 1;

struct nv_ioctl_rm_api_version_t {
    uint32_t cmd;
    uint32_t reply;
    char versionString[NV_RM_API_VERSION_STRING_LENGTH];
};
static_assert(sizeof(nv_ioctl_rm_api_version_t) == 72);
static_assert(offsetof(nv_ioctl_rm_api_version_t, versionString) == 8);

// NV_ESC_RM_FREE: frees an object (and its children).
struct NVOS00_PARAMETERS {
    uint32_t hRoot;
    uint32_t hObjectParent;
    uint32_t hObjectOld;
    uint32_t status;
};
static_assert(sizeof(NVOS00_PARAMETERS) == 16);
static_assert(offsetof(NVOS00_PARAMETERS, status) == 12);

// NV_ESC_RM_ALLOC_MEMORY: system memory objects (NV01_MEMORY_SYSTEM_OS_DESCRIPTOR, ...).
struct NVOS02_PARAMETERS {
    uint32_t hRoot;
    uint32_t hObjectParent;
    uint32_t hObjectNew;
    uint32_t hClass;
    uint32_t flags;
    alignas(8) uint64_t pMemory;
    alignas(8) uint64_t limit;
    uint32_t status;
};
static_assert(sizeof(NVOS02_PARAMETERS) == 48);
static_assert(offsetof(NVOS02_PARAMETERS, pMemory) == 24);
static_assert(offsetof(NVOS02_PARAMETERS, limit) == 32);
static_assert(offsetof(NVOS02_PARAMETERS, status) == 40);

// On Linux NV_ESC_RM_ALLOC_MEMORY takes the fd that the memory is mapped through.
struct nv_ioctl_nvos02_parameters_with_fd {
    NVOS02_PARAMETERS params;
    int32_t fd;
};
static_assert(sizeof(nv_ioctl_nvos02_parameters_with_fd) == 56);
static_assert(offsetof(nv_ioctl_nvos02_parameters_with_fd, fd) == 48);

// NVOS02_FLAGS_ fields of NVOS02_PARAMETERS::flags.
inline constexpr BitField NVOS02_FLAGS_PHYSICALITY{7, 4};
inline constexpr uint32_t NVOS02_FLAGS_PHYSICALITY_NONCONTIGUOUS = 0x1;
inline constexpr BitField NVOS02_FLAGS_LOCATION{11, 8};
inline constexpr uint32_t NVOS02_FLAGS_LOCATION_PCI = 0x0;
inline constexpr BitField NVOS02_FLAGS_COHERENCY{15, 12};
inline constexpr uint32_t NVOS02_FLAGS_COHERENCY_UNCACHED = 0x0;
inline constexpr uint32_t NVOS02_FLAGS_COHERENCY_CACHED = 0x1;
inline constexpr uint32_t NVOS02_FLAGS_COHERENCY_WRITE_BACK = 0x5;
inline constexpr BitField NVOS02_FLAGS_ALLOC_USER_READ_ONLY{21, 21};
inline constexpr BitField NVOS02_FLAGS_MAPPING{31, 30};
inline constexpr uint32_t NVOS02_FLAGS_MAPPING_NO_MAP = 0x1;

// NV_ESC_RM_ALLOC: allocates an object of class hClass with class-specific parameters.
struct NVOS21_PARAMETERS {
    uint32_t hRoot;
    uint32_t hObjectParent;
    uint32_t hObjectNew;
    uint32_t hClass;
    alignas(8) uint64_t pAllocParms;
    uint32_t paramsSize;
    uint32_t status;
};
static_assert(sizeof(NVOS21_PARAMETERS) == 32);
static_assert(offsetof(NVOS21_PARAMETERS, pAllocParms) == 16);
static_assert(offsetof(NVOS21_PARAMETERS, status) == 28);

// NV_ESC_RM_ALLOC with access rights; the driver tells the two apart by size.
struct NVOS64_PARAMETERS {
    uint32_t hRoot;
    uint32_t hObjectParent;
    uint32_t hObjectNew;
    uint32_t hClass;
    alignas(8) uint64_t pAllocParms;
    alignas(8) uint64_t pRightsRequested;
    uint32_t paramsSize;
    uint32_t flags;
    uint32_t status;
};
static_assert(sizeof(NVOS64_PARAMETERS) == 48);
static_assert(offsetof(NVOS64_PARAMETERS, pAllocParms) == 16);
static_assert(offsetof(NVOS64_PARAMETERS, pRightsRequested) == 24);
static_assert(offsetof(NVOS64_PARAMETERS, status) == 40);

// NV_ESC_RM_MAP_MEMORY: maps memory for the CPU (then mmap() the returned offset).
struct NVOS33_PARAMETERS {
    uint32_t hClient;
    uint32_t hDevice;
    uint32_t hMemory;
    alignas(8) uint64_t offset;
    alignas(8) uint64_t length;
    alignas(8) uint64_t pLinearAddress;
    uint32_t status;
    uint32_t flags;
};
static_assert(sizeof(NVOS33_PARAMETERS) == 48);
static_assert(offsetof(NVOS33_PARAMETERS, offset) == 16);
static_assert(offsetof(NVOS33_PARAMETERS, length) == 24);
static_assert(offsetof(NVOS33_PARAMETERS, pLinearAddress) == 32);
static_assert(offsetof(NVOS33_PARAMETERS, flags) == 44);

// On Linux NV_ESC_RM_MAP_MEMORY names the fd the mapping will be mmap()ed from.
struct nv_ioctl_nvos33_parameters_with_fd {
    NVOS33_PARAMETERS params;
    int32_t fd;
};
static_assert(sizeof(nv_ioctl_nvos33_parameters_with_fd) == 56);
static_assert(offsetof(nv_ioctl_nvos33_parameters_with_fd, fd) == 48);

// NVOS33_FLAGS_ fields (map and unmap memory flags).
inline constexpr BitField NVOS33_FLAGS_ACCESS{1, 0};
inline constexpr uint32_t NVOS33_FLAGS_ACCESS_READ_ONLY = 0x1;
inline constexpr BitField NVOS33_FLAGS_CACHING_TYPE{25, 23};
inline constexpr uint32_t NVOS33_FLAGS_CACHING_TYPE_WRITECOMBINED = 2;
inline constexpr uint32_t NVOS33_FLAGS_CACHING_TYPE_DEFAULT = 6;

// NV_ESC_RM_UNMAP_MEMORY.
struct NVOS34_PARAMETERS {
    uint32_t hClient;
    uint32_t hDevice;
    uint32_t hMemory;
    alignas(8) uint64_t pLinearAddress;
    uint32_t status;
    uint32_t flags;
};
static_assert(sizeof(NVOS34_PARAMETERS) == 32);
static_assert(offsetof(NVOS34_PARAMETERS, pLinearAddress) == 16);
static_assert(offsetof(NVOS34_PARAMETERS, flags) == 28);

// NV_ESC_RM_MAP_MEMORY_DMA: maps memory into a GPU virtual address space.
struct NVOS46_PARAMETERS {
    uint32_t hClient;
    uint32_t hDevice;
    uint32_t hDma;
    uint32_t hMemory;
    alignas(8) uint64_t offset;
    alignas(8) uint64_t length;
    uint32_t flags;
    uint32_t flags2;
    uint32_t kindOverride;
    alignas(8) uint64_t dmaOffset;
    uint32_t status;
};
static_assert(sizeof(NVOS46_PARAMETERS) == 64);
static_assert(offsetof(NVOS46_PARAMETERS, offset) == 16);
static_assert(offsetof(NVOS46_PARAMETERS, length) == 24);
static_assert(offsetof(NVOS46_PARAMETERS, dmaOffset) == 48);
static_assert(offsetof(NVOS46_PARAMETERS, status) == 56);

// NVOS46_FLAGS_ / NVOS46_FLAGS2_ fields of NVOS46_PARAMETERS.
inline constexpr BitField NVOS46_FLAGS_ACCESS{1, 0};
inline constexpr uint32_t NVOS46_FLAGS_ACCESS_READ_WRITE = 0x0;
inline constexpr BitField NVOS46_FLAGS_CACHE_SNOOP{4, 4};
inline constexpr uint32_t NVOS46_FLAGS_CACHE_SNOOP_DISABLE = 0x0;
inline constexpr uint32_t NVOS46_FLAGS_CACHE_SNOOP_ENABLE = 0x1;
inline constexpr BitField NVOS46_FLAGS_PAGE_SIZE{11, 8};
inline constexpr uint32_t NVOS46_FLAGS_PAGE_SIZE_4KB = 0x1;
inline constexpr uint32_t NVOS46_FLAGS_PAGE_SIZE_HUGE = 0x4;
inline constexpr BitField NVOS46_FLAGS_DMA_OFFSET_FIXED{15, 15};
inline constexpr uint32_t NVOS46_FLAGS_DMA_OFFSET_FIXED_TRUE = 0x1;
// Another GPU's video memory (the mapping GPU reaches it through its peer
// id, which an NV50_P2P object between the two subdevices establishes).
inline constexpr BitField NVOS46_FLAGS_P2P_ENABLE{21, 20};
inline constexpr uint32_t NVOS46_FLAGS_P2P_ENABLE_NOSLI = 0x2;

// NV_ESC_RM_UNMAP_MEMORY_DMA.
struct NVOS47_PARAMETERS {
    uint32_t hClient;
    uint32_t hDevice;
    uint32_t hDma;
    uint32_t hMemory;
    uint32_t flags;
    alignas(8) uint64_t dmaOffset;
    alignas(8) uint64_t size;
    uint32_t status;
};
static_assert(sizeof(NVOS47_PARAMETERS) == 48);
static_assert(offsetof(NVOS47_PARAMETERS, dmaOffset) == 24);
static_assert(offsetof(NVOS47_PARAMETERS, size) == 32);
static_assert(offsetof(NVOS47_PARAMETERS, status) == 40);

// NV_ESC_RM_CONTROL: runs control command cmd on object hObject.
struct NVOS54_PARAMETERS {
    uint32_t hClient;
    uint32_t hObject;
    uint32_t cmd;
    uint32_t flags;
    alignas(8) uint64_t params;
    uint32_t paramsSize;
    uint32_t status;
};
static_assert(sizeof(NVOS54_PARAMETERS) == 32);
static_assert(offsetof(NVOS54_PARAMETERS, params) == 16);
static_assert(offsetof(NVOS54_PARAMETERS, status) == 28);
// NVOS54_PARAMETERS::flags.
inline constexpr uint32_t NVOS54_FLAGS_IRQL_RAISED = 0x1;
inline constexpr uint32_t NVOS54_FLAGS_LOCK_BYPASS = 0x2;

// NVOS32 surface types (NV_MEMORY_ALLOCATION_PARAMS::type).
inline constexpr uint32_t NVOS32_TYPE_IMAGE = 0;
inline constexpr uint32_t NVOS32_TYPE_NOTIFIER = 13;

// NVOS32_ATTR_ fields (NV_MEMORY_ALLOCATION_PARAMS::attr).
inline constexpr BitField NVOS32_ATTR_PAGE_SIZE{24, 23};
inline constexpr uint32_t NVOS32_ATTR_PAGE_SIZE_DEFAULT = 0x0;
inline constexpr uint32_t NVOS32_ATTR_PAGE_SIZE_4KB = 0x1;
inline constexpr uint32_t NVOS32_ATTR_PAGE_SIZE_BIG = 0x2;
inline constexpr uint32_t NVOS32_ATTR_PAGE_SIZE_HUGE = 0x3;
inline constexpr BitField NVOS32_ATTR_LOCATION{26, 25};
inline constexpr uint32_t NVOS32_ATTR_LOCATION_PCI = 0x1;
inline constexpr BitField NVOS32_ATTR_PHYSICALITY{28, 27};
inline constexpr uint32_t NVOS32_ATTR_PHYSICALITY_NONCONTIGUOUS = 0x1;
inline constexpr uint32_t NVOS32_ATTR_PHYSICALITY_CONTIGUOUS = 0x2;
inline constexpr uint32_t NVOS32_ATTR_PHYSICALITY_ALLOW_NONCONTIGUOUS = 0x3;

// NVOS32_ATTR2_ fields (NV_MEMORY_ALLOCATION_PARAMS::attr2).
inline constexpr BitField NVOS32_ATTR2_ZBC{1, 0};
inline constexpr uint32_t NVOS32_ATTR2_ZBC_PREFER_NO_ZBC = 0x1;
inline constexpr BitField NVOS32_ATTR2_GPU_CACHEABLE{3, 2};
inline constexpr uint32_t NVOS32_ATTR2_GPU_CACHEABLE_YES = 0x1;
inline constexpr uint32_t NVOS32_ATTR2_GPU_CACHEABLE_NO = 0x2;
inline constexpr BitField NVOS32_ATTR2_PAGE_SIZE_HUGE{21, 20};
inline constexpr uint32_t NVOS32_ATTR2_PAGE_SIZE_HUGE_2MB = 0x1;
inline constexpr uint32_t NVOS32_ATTR2_PAGE_SIZE_HUGE_512MB = 0x2;

// NVOS32_ALLOC_FLAGS_ bits (NV_MEMORY_ALLOCATION_PARAMS::flags); some bits have two names.
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_IGNORE_BANK_PLACEMENT = 0x1;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_ALIGNMENT_HINT = 0x80;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_ALIGNMENT_FORCE = 0x100;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_MEMORY_HANDLE_PROVIDED = 0x4000;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_MAP_NOT_REQUIRED = 0x8000;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_PERSISTENT_VIDMEM = 0x10000;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_VIRTUAL = 0x80000;

}  // namespace nvl::nv
