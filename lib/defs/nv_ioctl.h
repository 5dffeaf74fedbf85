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
inline constexpr uint32_t NV_ESC_RM_DUP_OBJECT = 0x34;  // NVOS55
inline constexpr uint32_t NV_ESC_RM_VID_HEAP_CONTROL = 0x4A;  // NVOS32
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
using nv_ioctl_pci_info_t = nv_pci_info_t;  // nvlite alias; NVIDIA's name is nv_pci_info_t

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
inline constexpr uint32_t NV_RM_API_VERSION_CMD_STRICT = 0;
inline constexpr uint32_t NV_RM_API_VERSION_CMD_RELAXED = '1';
inline constexpr uint32_t NV_RM_API_VERSION_CMD_QUERY = '2';
inline constexpr uint32_t NV_RM_API_VERSION_REPLY_UNRECOGNIZED = 0;
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
inline constexpr uint32_t NVOS02_FLAGS_PHYSICALITY_CONTIGUOUS = 0x0;
inline constexpr uint32_t NVOS02_FLAGS_PHYSICALITY_NONCONTIGUOUS = 0x1;
inline constexpr BitField NVOS02_FLAGS_LOCATION{11, 8};
inline constexpr uint32_t NVOS02_FLAGS_LOCATION_PCI = 0x0;
inline constexpr uint32_t NVOS02_FLAGS_LOCATION_VIDMEM = 0x2;
inline constexpr BitField NVOS02_FLAGS_COHERENCY{15, 12};
inline constexpr uint32_t NVOS02_FLAGS_COHERENCY_UNCACHED = 0x0;
inline constexpr uint32_t NVOS02_FLAGS_COHERENCY_CACHED = 0x1;
inline constexpr uint32_t NVOS02_FLAGS_COHERENCY_WRITE_COMBINE = 0x2;
inline constexpr uint32_t NVOS02_FLAGS_COHERENCY_WRITE_THROUGH = 0x3;
inline constexpr uint32_t NVOS02_FLAGS_COHERENCY_WRITE_PROTECT = 0x4;
inline constexpr uint32_t NVOS02_FLAGS_COHERENCY_WRITE_BACK = 0x5;
inline constexpr BitField NVOS02_FLAGS_ALLOC{17, 16};
inline constexpr uint32_t NVOS02_FLAGS_ALLOC_NONE = 0x1;
inline constexpr BitField NVOS02_FLAGS_GPU_CACHEABLE{18, 18};
inline constexpr uint32_t NVOS02_FLAGS_GPU_CACHEABLE_NO = 0x0;
inline constexpr uint32_t NVOS02_FLAGS_GPU_CACHEABLE_YES = 0x1;
inline constexpr BitField NVOS02_FLAGS_KERNEL_MAPPING{19, 19};
inline constexpr uint32_t NVOS02_FLAGS_KERNEL_MAPPING_NO_MAP = 0x0;
inline constexpr uint32_t NVOS02_FLAGS_KERNEL_MAPPING_MAP = 0x1;
inline constexpr BitField NVOS02_FLAGS_ALLOC_NISO_DISPLAY{20, 20};
inline constexpr uint32_t NVOS02_FLAGS_ALLOC_NISO_DISPLAY_NO = 0x0;
inline constexpr uint32_t NVOS02_FLAGS_ALLOC_NISO_DISPLAY_YES = 0x1;
inline constexpr BitField NVOS02_FLAGS_ALLOC_USER_READ_ONLY{21, 21};
inline constexpr uint32_t NVOS02_FLAGS_ALLOC_USER_READ_ONLY_NO = 0x0;
inline constexpr uint32_t NVOS02_FLAGS_ALLOC_USER_READ_ONLY_YES = 0x1;
inline constexpr BitField NVOS02_FLAGS_ALLOC_DEVICE_READ_ONLY{22, 22};
inline constexpr uint32_t NVOS02_FLAGS_ALLOC_DEVICE_READ_ONLY_NO = 0x0;
inline constexpr uint32_t NVOS02_FLAGS_ALLOC_DEVICE_READ_ONLY_YES = 0x1;
inline constexpr BitField NVOS02_FLAGS_PEER_MAP_OVERRIDE{23, 23};
inline constexpr uint32_t NVOS02_FLAGS_PEER_MAP_OVERRIDE_DEFAULT = 0x0;
inline constexpr uint32_t NVOS02_FLAGS_PEER_MAP_OVERRIDE_REQUIRED = 0x1;
inline constexpr BitField NVOS02_FLAGS_ALLOC_TYPE_SYNCPOINT{24, 24};
inline constexpr uint32_t NVOS02_FLAGS_ALLOC_TYPE_SYNCPOINT_APERTURE = 0x1;
inline constexpr BitField NVOS02_FLAGS_MEMORY_PROTECTION{26, 25};
inline constexpr uint32_t NVOS02_FLAGS_MEMORY_PROTECTION_DEFAULT = 0x0;
inline constexpr uint32_t NVOS02_FLAGS_MEMORY_PROTECTION_PROTECTED = 0x1;
inline constexpr uint32_t NVOS02_FLAGS_MEMORY_PROTECTION_UNPROTECTED = 0x2;
inline constexpr BitField NVOS02_FLAGS_REGISTER_MEMDESC_TO_PHYS_RM{27, 27};
inline constexpr uint32_t NVOS02_FLAGS_REGISTER_MEMDESC_TO_PHYS_RM_FALSE = 0x0;
inline constexpr uint32_t NVOS02_FLAGS_REGISTER_MEMDESC_TO_PHYS_RM_TRUE = 0x1;
inline constexpr BitField NVOS02_FLAGS_MAPPING{31, 30};
inline constexpr uint32_t NVOS02_FLAGS_MAPPING_DEFAULT = 0x0;
inline constexpr uint32_t NVOS02_FLAGS_MAPPING_NO_MAP = 0x1;
inline constexpr uint32_t NVOS02_FLAGS_MAPPING_NEVER_MAP = 0x2;

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
// NVOS64_PARAMETERS::flags.
inline constexpr uint32_t NVOS64_FLAGS_NONE = 0x0;
inline constexpr uint32_t NVOS64_FLAGS_FINN_SERIALIZED = 0x1;

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
inline constexpr uint32_t NVOS33_FLAGS_ACCESS_READ_WRITE = 0x0;
inline constexpr uint32_t NVOS33_FLAGS_ACCESS_READ_ONLY = 0x1;
inline constexpr uint32_t NVOS33_FLAGS_ACCESS_WRITE_ONLY = 0x2;
inline constexpr BitField NVOS33_FLAGS_PERSISTENT{4, 4};
inline constexpr uint32_t NVOS33_FLAGS_PERSISTENT_DISABLE = 0x0;
inline constexpr uint32_t NVOS33_FLAGS_PERSISTENT_ENABLE = 0x1;
inline constexpr BitField NVOS33_FLAGS_SKIP_SIZE_CHECK{8, 8};
inline constexpr uint32_t NVOS33_FLAGS_SKIP_SIZE_CHECK_DISABLE = 0x0;
inline constexpr uint32_t NVOS33_FLAGS_SKIP_SIZE_CHECK_ENABLE = 0x1;
inline constexpr BitField NVOS33_FLAGS_MEM_SPACE{14, 14};
inline constexpr uint32_t NVOS33_FLAGS_MEM_SPACE_CLIENT = 0x0;
inline constexpr uint32_t NVOS33_FLAGS_MEM_SPACE_USER = 0x1;
inline constexpr BitField NVOS33_FLAGS_MAPPING{16, 15};
inline constexpr uint32_t NVOS33_FLAGS_MAPPING_DEFAULT = 0x0;
inline constexpr uint32_t NVOS33_FLAGS_MAPPING_DIRECT = 0x1;
inline constexpr uint32_t NVOS33_FLAGS_MAPPING_REFLECTED = 0x2;
inline constexpr BitField NVOS33_FLAGS_FIFO_MAPPING{17, 17};
inline constexpr uint32_t NVOS33_FLAGS_FIFO_MAPPING_DEFAULT = 0x0;
inline constexpr uint32_t NVOS33_FLAGS_FIFO_MAPPING_ENABLE = 0x1;
inline constexpr BitField NVOS33_FLAGS_MAP_FIXED{18, 18};
inline constexpr uint32_t NVOS33_FLAGS_MAP_FIXED_DISABLE = 0x0;
inline constexpr uint32_t NVOS33_FLAGS_MAP_FIXED_ENABLE = 0x1;
inline constexpr BitField NVOS33_FLAGS_RESERVE_ON_UNMAP{19, 19};
inline constexpr uint32_t NVOS33_FLAGS_RESERVE_ON_UNMAP_DISABLE = 0x0;
inline constexpr uint32_t NVOS33_FLAGS_RESERVE_ON_UNMAP_ENABLE = 0x1;
inline constexpr BitField NVOS33_FLAGS_OS_DESCRIPTOR{22, 22};
inline constexpr uint32_t NVOS33_FLAGS_OS_DESCRIPTOR_DISABLE = 0x0;
inline constexpr uint32_t NVOS33_FLAGS_OS_DESCRIPTOR_ENABLE = 0x1;
inline constexpr BitField NVOS33_FLAGS_CACHING_TYPE{25, 23};
inline constexpr uint32_t NVOS33_FLAGS_CACHING_TYPE_CACHED = 0;
inline constexpr uint32_t NVOS33_FLAGS_CACHING_TYPE_UNCACHED = 1;
inline constexpr uint32_t NVOS33_FLAGS_CACHING_TYPE_WRITECOMBINED = 2;
inline constexpr uint32_t NVOS33_FLAGS_CACHING_TYPE_WRITEBACK = 5;
inline constexpr uint32_t NVOS33_FLAGS_CACHING_TYPE_DEFAULT = 6;
inline constexpr uint32_t NVOS33_FLAGS_CACHING_TYPE_UNCACHED_WEAK = 7;
inline constexpr BitField NVOS33_FLAGS_ALLOW_MAPPING_ON_HCC{26, 26};
inline constexpr uint32_t NVOS33_FLAGS_ALLOW_MAPPING_ON_HCC_NO = 0x0;
inline constexpr uint32_t NVOS33_FLAGS_ALLOW_MAPPING_ON_HCC_YES = 0x1;

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
inline constexpr uint32_t NVOS46_FLAGS_ACCESS_READ_ONLY = 0x1;
inline constexpr uint32_t NVOS46_FLAGS_ACCESS_WRITE_ONLY = 0x2;
inline constexpr BitField NVOS46_FLAGS_32BIT_POINTER{2, 2};
inline constexpr uint32_t NVOS46_FLAGS_32BIT_POINTER_DISABLE = 0x0;
inline constexpr uint32_t NVOS46_FLAGS_32BIT_POINTER_ENABLE = 0x1;
inline constexpr BitField NVOS46_FLAGS_PAGE_KIND{3, 3};
inline constexpr uint32_t NVOS46_FLAGS_PAGE_KIND_PHYSICAL = 0x0;
inline constexpr uint32_t NVOS46_FLAGS_PAGE_KIND_VIRTUAL = 0x1;
inline constexpr BitField NVOS46_FLAGS_CACHE_SNOOP{4, 4};
inline constexpr uint32_t NVOS46_FLAGS_CACHE_SNOOP_DISABLE = 0x0;
inline constexpr uint32_t NVOS46_FLAGS_CACHE_SNOOP_ENABLE = 0x1;
inline constexpr BitField NVOS46_FLAGS_KERNEL_MAPPING{5, 5};
inline constexpr uint32_t NVOS46_FLAGS_KERNEL_MAPPING_NONE = 0x0;
inline constexpr uint32_t NVOS46_FLAGS_KERNEL_MAPPING_ENABLE = 0x1;
inline constexpr BitField NVOS46_FLAGS_SHADER_ACCESS{7, 6};
inline constexpr uint32_t NVOS46_FLAGS_SHADER_ACCESS_DEFAULT = 0x0;
inline constexpr uint32_t NVOS46_FLAGS_SHADER_ACCESS_READ_ONLY = 0x1;
inline constexpr uint32_t NVOS46_FLAGS_SHADER_ACCESS_WRITE_ONLY = 0x2;
inline constexpr uint32_t NVOS46_FLAGS_SHADER_ACCESS_READ_WRITE = 0x3;
inline constexpr BitField NVOS46_FLAGS_PAGE_SIZE{11, 8};
inline constexpr uint32_t NVOS46_FLAGS_PAGE_SIZE_DEFAULT = 0x0;
inline constexpr uint32_t NVOS46_FLAGS_PAGE_SIZE_4KB = 0x1;
inline constexpr uint32_t NVOS46_FLAGS_PAGE_SIZE_BIG = 0x2;
inline constexpr uint32_t NVOS46_FLAGS_PAGE_SIZE_BOTH = 0x3;
inline constexpr uint32_t NVOS46_FLAGS_PAGE_SIZE_HUGE = 0x4;
inline constexpr uint32_t NVOS46_FLAGS_PAGE_SIZE_512M = 0x5;
inline constexpr BitField NVOS46_FLAGS_SYSTEM_L3_ALLOC{13, 13};
inline constexpr uint32_t NVOS46_FLAGS_SYSTEM_L3_ALLOC_DEFAULT = 0x0;
inline constexpr uint32_t NVOS46_FLAGS_SYSTEM_L3_ALLOC_ENABLE_HINT = 0x1;
inline constexpr BitField NVOS46_FLAGS_DMA_OFFSET_GROWS{14, 14};
inline constexpr uint32_t NVOS46_FLAGS_DMA_OFFSET_GROWS_UP = 0x0;
inline constexpr uint32_t NVOS46_FLAGS_DMA_OFFSET_GROWS_DOWN = 0x1;
inline constexpr BitField NVOS46_FLAGS_DMA_OFFSET_FIXED{15, 15};
inline constexpr uint32_t NVOS46_FLAGS_DMA_OFFSET_FIXED_FALSE = 0x0;
inline constexpr uint32_t NVOS46_FLAGS_DMA_OFFSET_FIXED_TRUE = 0x1;
inline constexpr BitField NVOS46_FLAGS_DISABLE_ENCRYPTION{16, 16};
inline constexpr uint32_t NVOS46_FLAGS_DISABLE_ENCRYPTION_FALSE = 0x0;
inline constexpr uint32_t NVOS46_FLAGS_DISABLE_ENCRYPTION_TRUE = 0x1;
inline constexpr BitField NVOS46_FLAGS_GPU_CACHEABLE{18, 17};
inline constexpr uint32_t NVOS46_FLAGS_GPU_CACHEABLE_DEFAULT = 0x0;
inline constexpr uint32_t NVOS46_FLAGS_GPU_CACHEABLE_YES = 0x1;
inline constexpr uint32_t NVOS46_FLAGS_GPU_CACHEABLE_NO = 0x2;
inline constexpr uint32_t NVOS46_FLAGS_GPU_CACHEABLE_INVALID = 0x3;
inline constexpr BitField NVOS46_FLAGS_PAGE_KIND_OVERRIDE{19, 19};
inline constexpr uint32_t NVOS46_FLAGS_PAGE_KIND_OVERRIDE_NO = 0x0;
inline constexpr uint32_t NVOS46_FLAGS_PAGE_KIND_OVERRIDE_YES = 0x1;
inline constexpr BitField NVOS46_FLAGS_P2P{27, 20};
inline constexpr BitField NVOS46_FLAGS_P2P_ENABLE{21, 20};
inline constexpr uint32_t NVOS46_FLAGS_P2P_ENABLE_NO = 0x0;
inline constexpr uint32_t NVOS46_FLAGS_P2P_ENABLE_YES = 0x1;
inline constexpr uint32_t NVOS46_FLAGS_P2P_ENABLE_NONE = 0x0;
inline constexpr uint32_t NVOS46_FLAGS_P2P_ENABLE_SLI = 0x1;
inline constexpr uint32_t NVOS46_FLAGS_P2P_ENABLE_NOSLI = 0x2;
inline constexpr BitField NVOS46_FLAGS_P2P_SUBDEVICE_ID{24, 22};
inline constexpr BitField NVOS46_FLAGS_P2P_SUBDEV_ID_SRC{24, 22};
inline constexpr BitField NVOS46_FLAGS_P2P_SUBDEV_ID_TGT{27, 25};
inline constexpr BitField NVOS46_FLAGS_TLB_LOCK{28, 28};
inline constexpr uint32_t NVOS46_FLAGS_TLB_LOCK_DISABLE = 0x0;
inline constexpr uint32_t NVOS46_FLAGS_TLB_LOCK_ENABLE = 0x1;
inline constexpr BitField NVOS46_FLAGS_DMA_UNICAST_REUSE_ALLOC{29, 29};
inline constexpr uint32_t NVOS46_FLAGS_DMA_UNICAST_REUSE_ALLOC_FALSE = 0x0;
inline constexpr uint32_t NVOS46_FLAGS_DMA_UNICAST_REUSE_ALLOC_TRUE = 0x1;
inline constexpr BitField NVOS46_FLAGS_ENABLE_FORCE_COMPRESSED_MAP{30, 30};
inline constexpr uint32_t NVOS46_FLAGS_ENABLE_FORCE_COMPRESSED_MAP_FALSE = 0x0;
inline constexpr uint32_t NVOS46_FLAGS_ENABLE_FORCE_COMPRESSED_MAP_TRUE = 0x1;
inline constexpr BitField NVOS46_FLAGS_DEFER_TLB_INVALIDATION{31, 31};
inline constexpr uint32_t NVOS46_FLAGS_DEFER_TLB_INVALIDATION_FALSE = 0x0;
inline constexpr uint32_t NVOS46_FLAGS_DEFER_TLB_INVALIDATION_TRUE = 0x1;
inline constexpr BitField NVOS46_FLAGS2_GPU_CACHE_SNOOP{1, 0};
inline constexpr uint32_t NVOS46_FLAGS2_GPU_CACHE_SNOOP_DEFAULT = 0x0;
inline constexpr uint32_t NVOS46_FLAGS2_GPU_CACHE_SNOOP_ENABLE = 0x1;
inline constexpr uint32_t NVOS46_FLAGS2_GPU_CACHE_SNOOP_DISABLE = 0x2;

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
// NVOS47_PARAMETERS::flags.
inline constexpr BitField NVOS47_FLAGS_DEFER_TLB_INVALIDATION{0, 0};
inline constexpr uint32_t NVOS47_FLAGS_DEFER_TLB_INVALIDATION_FALSE = 0x0;
inline constexpr uint32_t NVOS47_FLAGS_DEFER_TLB_INVALIDATION_TRUE = 0x1;

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
inline constexpr uint32_t NVOS54_FLAGS_NONE = 0x0;
inline constexpr uint32_t NVOS54_FLAGS_IRQL_RAISED = 0x1;
inline constexpr uint32_t NVOS54_FLAGS_LOCK_BYPASS = 0x2;
inline constexpr uint32_t NVOS54_FLAGS_FINN_SERIALIZED = 0x4;

// NV_ESC_RM_DUP_OBJECT: duplicates an object handle into another client/parent.
struct NVOS55_PARAMETERS {
    uint32_t hClient;
    uint32_t hParent;
    uint32_t hObject;
    uint32_t hClientSrc;
    uint32_t hObjectSrc;
    uint32_t flags;
    uint32_t status;
};
static_assert(sizeof(NVOS55_PARAMETERS) == 28);
static_assert(offsetof(NVOS55_PARAMETERS, status) == 24);
// NVOS55_PARAMETERS::flags.
inline constexpr uint32_t NV04_DUP_HANDLE_FLAGS_NONE = 0x0;
inline constexpr uint32_t NV04_DUP_HANDLE_FLAGS_REJECT_KERNEL_DUP_PRIVILEGE = 0x1;

// NVOS32 surface types (NV_MEMORY_ALLOCATION_PARAMS::type).
inline constexpr uint32_t NVOS32_TYPE_IMAGE = 0;
inline constexpr uint32_t NVOS32_TYPE_DEPTH = 1;
inline constexpr uint32_t NVOS32_TYPE_TEXTURE = 2;
inline constexpr uint32_t NVOS32_TYPE_VIDEO = 3;
inline constexpr uint32_t NVOS32_TYPE_FONT = 4;
inline constexpr uint32_t NVOS32_TYPE_CURSOR = 5;
inline constexpr uint32_t NVOS32_TYPE_DMA = 6;
inline constexpr uint32_t NVOS32_TYPE_INSTANCE = 7;
inline constexpr uint32_t NVOS32_TYPE_PRIMARY = 8;
inline constexpr uint32_t NVOS32_TYPE_ZCULL = 9;
inline constexpr uint32_t NVOS32_TYPE_UNUSED = 10;
inline constexpr uint32_t NVOS32_TYPE_SHADER_PROGRAM = 11;
inline constexpr uint32_t NVOS32_TYPE_OWNER_RM = 12;
inline constexpr uint32_t NVOS32_TYPE_NOTIFIER = 13;
inline constexpr uint32_t NVOS32_TYPE_RESERVED = 14;
inline constexpr uint32_t NVOS32_TYPE_PMA = 15;
inline constexpr uint32_t NVOS32_TYPE_STENCIL = 16;
inline constexpr uint32_t NVOS32_TYPE_SYNCPOINT = 17;
inline constexpr uint32_t NVOS32_NUM_MEM_TYPES = 18;

// NVOS32_ATTR_ fields (NV_MEMORY_ALLOCATION_PARAMS::attr).
inline constexpr uint32_t NVOS32_ATTR_NONE = 0x0;
inline constexpr BitField NVOS32_ATTR_DEPTH{2, 0};
inline constexpr uint32_t NVOS32_ATTR_DEPTH_UNKNOWN = 0x0;
inline constexpr uint32_t NVOS32_ATTR_DEPTH_8 = 0x1;
inline constexpr uint32_t NVOS32_ATTR_DEPTH_16 = 0x2;
inline constexpr uint32_t NVOS32_ATTR_DEPTH_24 = 0x3;
inline constexpr uint32_t NVOS32_ATTR_DEPTH_32 = 0x4;
inline constexpr uint32_t NVOS32_ATTR_DEPTH_64 = 0x5;
inline constexpr uint32_t NVOS32_ATTR_DEPTH_128 = 0x6;
inline constexpr BitField NVOS32_ATTR_COMPR_COVG{3, 3};
inline constexpr uint32_t NVOS32_ATTR_COMPR_COVG_DEFAULT = 0x0;
inline constexpr uint32_t NVOS32_ATTR_COMPR_COVG_PROVIDED = 0x1;
inline constexpr BitField NVOS32_ATTR_AA_SAMPLES{7, 4};
inline constexpr uint32_t NVOS32_ATTR_AA_SAMPLES_1 = 0x0;
inline constexpr uint32_t NVOS32_ATTR_AA_SAMPLES_2 = 0x1;
inline constexpr uint32_t NVOS32_ATTR_AA_SAMPLES_4 = 0x2;
inline constexpr uint32_t NVOS32_ATTR_AA_SAMPLES_4_ROTATED = 0x3;
inline constexpr uint32_t NVOS32_ATTR_AA_SAMPLES_6 = 0x4;
inline constexpr uint32_t NVOS32_ATTR_AA_SAMPLES_8 = 0x5;
inline constexpr uint32_t NVOS32_ATTR_AA_SAMPLES_16 = 0x6;
inline constexpr uint32_t NVOS32_ATTR_AA_SAMPLES_4_VIRTUAL_8 = 0x7;
inline constexpr uint32_t NVOS32_ATTR_AA_SAMPLES_4_VIRTUAL_16 = 0x8;
inline constexpr uint32_t NVOS32_ATTR_AA_SAMPLES_8_VIRTUAL_16 = 0x9;
inline constexpr uint32_t NVOS32_ATTR_AA_SAMPLES_8_VIRTUAL_32 = 0xA;
inline constexpr BitField NVOS32_ATTR_GPU_CACHE_SNOOPABLE{9, 8};
inline constexpr uint32_t NVOS32_ATTR_GPU_CACHE_SNOOPABLE_MAPPING = 0x0;
inline constexpr uint32_t NVOS32_ATTR_GPU_CACHE_SNOOPABLE_OFF = 0x1;
inline constexpr uint32_t NVOS32_ATTR_GPU_CACHE_SNOOPABLE_ON = 0x2;
inline constexpr uint32_t NVOS32_ATTR_GPU_CACHE_SNOOPABLE_INVALID = 0x3;
inline constexpr BitField NVOS32_ATTR_ZCULL{11, 10};
inline constexpr uint32_t NVOS32_ATTR_ZCULL_NONE = 0x0;
inline constexpr uint32_t NVOS32_ATTR_ZCULL_REQUIRED = 0x1;
inline constexpr uint32_t NVOS32_ATTR_ZCULL_ANY = 0x2;
inline constexpr uint32_t NVOS32_ATTR_ZCULL_SHARED = 0x3;
inline constexpr BitField NVOS32_ATTR_COMPR{13, 12};
inline constexpr uint32_t NVOS32_ATTR_COMPR_NONE = 0x0;
inline constexpr uint32_t NVOS32_ATTR_COMPR_REQUIRED = 0x1;
inline constexpr uint32_t NVOS32_ATTR_COMPR_ANY = 0x2;
inline constexpr uint32_t NVOS32_ATTR_COMPR_PLC_REQUIRED = 0x1;
inline constexpr uint32_t NVOS32_ATTR_COMPR_PLC_ANY = 0x2;
inline constexpr uint32_t NVOS32_ATTR_COMPR_DISABLE_PLC_ANY = 0x3;
inline constexpr BitField NVOS32_ATTR_ALLOCATE_FROM_RESERVED_HEAP{14, 14};
inline constexpr uint32_t NVOS32_ATTR_ALLOCATE_FROM_RESERVED_HEAP_NO = 0x0;
inline constexpr uint32_t NVOS32_ATTR_ALLOCATE_FROM_RESERVED_HEAP_YES = 0x1;
inline constexpr BitField NVOS32_ATTR_FORMAT{17, 16};
inline constexpr uint32_t NVOS32_ATTR_FORMAT_LOW_FIELD = 16;
inline constexpr uint32_t NVOS32_ATTR_FORMAT_HIGH_FIELD = 17;
inline constexpr uint32_t NVOS32_ATTR_FORMAT_PITCH = 0x0;
inline constexpr uint32_t NVOS32_ATTR_FORMAT_SWIZZLED = 0x1;
inline constexpr uint32_t NVOS32_ATTR_FORMAT_BLOCK_LINEAR = 0x2;
inline constexpr BitField NVOS32_ATTR_Z_TYPE{18, 18};
inline constexpr uint32_t NVOS32_ATTR_Z_TYPE_FIXED = 0x0;
inline constexpr uint32_t NVOS32_ATTR_Z_TYPE_FLOAT = 0x1;
inline constexpr BitField NVOS32_ATTR_ZS_PACKING{21, 19};
inline constexpr uint32_t NVOS32_ATTR_ZS_PACKING_S8 = 0x0;
inline constexpr uint32_t NVOS32_ATTR_ZS_PACKING_Z24S8 = 0x0;
inline constexpr uint32_t NVOS32_ATTR_ZS_PACKING_S8Z24 = 0x1;
inline constexpr uint32_t NVOS32_ATTR_ZS_PACKING_Z32 = 0x2;
inline constexpr uint32_t NVOS32_ATTR_ZS_PACKING_Z24X8 = 0x3;
inline constexpr uint32_t NVOS32_ATTR_ZS_PACKING_X8Z24 = 0x4;
inline constexpr uint32_t NVOS32_ATTR_ZS_PACKING_Z32_X24S8 = 0x5;
inline constexpr uint32_t NVOS32_ATTR_ZS_PACKING_X8Z24_X24S8 = 0x6;
inline constexpr uint32_t NVOS32_ATTR_ZS_PACKING_Z16 = 0x7;
inline constexpr BitField NVOS32_ATTR_COLOR_PACKING{21, 19};
inline constexpr uint32_t NVOS32_ATTR_COLOR_PACKING_A8R8G8B8 = 0x0;
inline constexpr uint32_t NVOS32_ATTR_COLOR_PACKING_X8R8G8B8 = 0x1;
inline constexpr BitField NVOS32_ATTR_PAGE_SIZE{24, 23};
inline constexpr uint32_t NVOS32_ATTR_PAGE_SIZE_DEFAULT = 0x0;
inline constexpr uint32_t NVOS32_ATTR_PAGE_SIZE_4KB = 0x1;
inline constexpr uint32_t NVOS32_ATTR_PAGE_SIZE_BIG = 0x2;
inline constexpr uint32_t NVOS32_ATTR_PAGE_SIZE_HUGE = 0x3;
inline constexpr BitField NVOS32_ATTR_LOCATION{26, 25};
inline constexpr uint32_t NVOS32_ATTR_LOCATION_VIDMEM = 0x0;
inline constexpr uint32_t NVOS32_ATTR_LOCATION_PCI = 0x1;
inline constexpr uint32_t NVOS32_ATTR_LOCATION_ANY = 0x3;
inline constexpr BitField NVOS32_ATTR_PHYSICALITY{28, 27};
inline constexpr uint32_t NVOS32_ATTR_PHYSICALITY_DEFAULT = 0x0;
inline constexpr uint32_t NVOS32_ATTR_PHYSICALITY_NONCONTIGUOUS = 0x1;
inline constexpr uint32_t NVOS32_ATTR_PHYSICALITY_CONTIGUOUS = 0x2;
inline constexpr uint32_t NVOS32_ATTR_PHYSICALITY_ALLOW_NONCONTIGUOUS = 0x3;
inline constexpr BitField NVOS32_ATTR_COHERENCY{31, 29};
inline constexpr uint32_t NVOS32_ATTR_COHERENCY_UNCACHED = 0x0;
inline constexpr uint32_t NVOS32_ATTR_COHERENCY_CACHED = 0x1;
inline constexpr uint32_t NVOS32_ATTR_COHERENCY_WRITE_COMBINE = 0x2;
inline constexpr uint32_t NVOS32_ATTR_COHERENCY_WRITE_THROUGH = 0x3;
inline constexpr uint32_t NVOS32_ATTR_COHERENCY_WRITE_PROTECT = 0x4;
inline constexpr uint32_t NVOS32_ATTR_COHERENCY_WRITE_BACK = 0x5;

// NVOS32_ATTR2_ fields (NV_MEMORY_ALLOCATION_PARAMS::attr2).
inline constexpr uint32_t NVOS32_ATTR2_NONE = 0x0;
inline constexpr BitField NVOS32_ATTR2_ZBC{1, 0};
inline constexpr uint32_t NVOS32_ATTR2_ZBC_DEFAULT = 0x0;
inline constexpr uint32_t NVOS32_ATTR2_ZBC_PREFER_NO_ZBC = 0x1;
inline constexpr uint32_t NVOS32_ATTR2_ZBC_PREFER_ZBC = 0x2;
inline constexpr uint32_t NVOS32_ATTR2_ZBC_REQUIRE_ONLY_ZBC = 0x3;
inline constexpr uint32_t NVOS32_ATTR2_ZBC_INVALID = 0x3;
inline constexpr BitField NVOS32_ATTR2_GPU_CACHEABLE{3, 2};
inline constexpr uint32_t NVOS32_ATTR2_GPU_CACHEABLE_DEFAULT = 0x0;
inline constexpr uint32_t NVOS32_ATTR2_GPU_CACHEABLE_YES = 0x1;
inline constexpr uint32_t NVOS32_ATTR2_GPU_CACHEABLE_NO = 0x2;
inline constexpr uint32_t NVOS32_ATTR2_GPU_CACHEABLE_INVALID = 0x3;
inline constexpr BitField NVOS32_ATTR2_P2P_GPU_CACHEABLE{5, 4};
inline constexpr uint32_t NVOS32_ATTR2_P2P_GPU_CACHEABLE_DEFAULT = 0x0;
inline constexpr uint32_t NVOS32_ATTR2_P2P_GPU_CACHEABLE_YES = 0x1;
inline constexpr uint32_t NVOS32_ATTR2_P2P_GPU_CACHEABLE_NO = 0x2;
inline constexpr BitField NVOS32_ATTR2_32BIT_POINTER{6, 6};
inline constexpr uint32_t NVOS32_ATTR2_32BIT_POINTER_DISABLE = 0x0;
inline constexpr uint32_t NVOS32_ATTR2_32BIT_POINTER_ENABLE = 0x1;
inline constexpr BitField NVOS32_ATTR2_FIXED_NUMA_NODE_ID{7, 7};
inline constexpr uint32_t NVOS32_ATTR2_FIXED_NUMA_NODE_ID_NO = 0x0;
inline constexpr uint32_t NVOS32_ATTR2_FIXED_NUMA_NODE_ID_YES = 0x1;
inline constexpr BitField NVOS32_ATTR2_SMMU_ON_GPU{9, 8};
inline constexpr uint32_t NVOS32_ATTR2_SMMU_ON_GPU_DEFAULT = 0x0;
inline constexpr uint32_t NVOS32_ATTR2_SMMU_ON_GPU_DISABLE = 0x1;
inline constexpr uint32_t NVOS32_ATTR2_SMMU_ON_GPU_ENABLE = 0x2;
inline constexpr BitField NVOS32_ATTR2_USE_SCANOUT_CARVEOUT{10, 10};
inline constexpr uint32_t NVOS32_ATTR2_USE_SCANOUT_CARVEOUT_FALSE = 0x0;
inline constexpr uint32_t NVOS32_ATTR2_USE_SCANOUT_CARVEOUT_TRUE = 0x1;
inline constexpr BitField NVOS32_ATTR2_ALLOC_COMPCACHELINE_ALIGN{11, 11};
inline constexpr uint32_t NVOS32_ATTR2_ALLOC_COMPCACHELINE_ALIGN_OFF = 0x0;
inline constexpr uint32_t NVOS32_ATTR2_ALLOC_COMPCACHELINE_ALIGN_ON = 0x1;
inline constexpr uint32_t NVOS32_ATTR2_ALLOC_COMPCACHELINE_ALIGN_DEFAULT = 0x0;
inline constexpr BitField NVOS32_ATTR2_PRIORITY{13, 12};
inline constexpr uint32_t NVOS32_ATTR2_PRIORITY_DEFAULT = 0x0;
inline constexpr uint32_t NVOS32_ATTR2_PRIORITY_HIGH = 0x1;
inline constexpr uint32_t NVOS32_ATTR2_PRIORITY_LOW = 0x2;
inline constexpr BitField NVOS32_ATTR2_INTERNAL{14, 14};
inline constexpr uint32_t NVOS32_ATTR2_INTERNAL_NO = 0x0;
inline constexpr uint32_t NVOS32_ATTR2_INTERNAL_YES = 0x1;
inline constexpr BitField NVOS32_ATTR2_PREFER_2C{15, 15};
inline constexpr uint32_t NVOS32_ATTR2_PREFER_2C_NO = 0x0;
inline constexpr uint32_t NVOS32_ATTR2_PREFER_2C_YES = 0x1;
inline constexpr BitField NVOS32_ATTR2_NISO_DISPLAY{16, 16};
inline constexpr uint32_t NVOS32_ATTR2_NISO_DISPLAY_NO = 0x0;
inline constexpr uint32_t NVOS32_ATTR2_NISO_DISPLAY_YES = 0x1;
inline constexpr BitField NVOS32_ATTR2_ZBC_SKIP_ZBCREFCOUNT{17, 17};
inline constexpr uint32_t NVOS32_ATTR2_ZBC_SKIP_ZBCREFCOUNT_NO = 0x0;
inline constexpr uint32_t NVOS32_ATTR2_ZBC_SKIP_ZBCREFCOUNT_YES = 0x1;
inline constexpr BitField NVOS32_ATTR2_ISO{18, 18};
inline constexpr uint32_t NVOS32_ATTR2_ISO_NO = 0x0;
inline constexpr uint32_t NVOS32_ATTR2_ISO_YES = 0x1;
inline constexpr BitField NVOS32_ATTR2_BLACKLIST{19, 19};
inline constexpr uint32_t NVOS32_ATTR2_BLACKLIST_ON = 0x0;
inline constexpr uint32_t NVOS32_ATTR2_BLACKLIST_OFF = 0x1;
inline constexpr BitField NVOS32_ATTR2_PAGE_OFFLINING{19, 19};
inline constexpr uint32_t NVOS32_ATTR2_PAGE_OFFLINING_ON = 0x0;
inline constexpr uint32_t NVOS32_ATTR2_PAGE_OFFLINING_OFF = 0x1;
inline constexpr BitField NVOS32_ATTR2_PAGE_SIZE_HUGE{21, 20};
inline constexpr uint32_t NVOS32_ATTR2_PAGE_SIZE_HUGE_DEFAULT = 0x0;
inline constexpr uint32_t NVOS32_ATTR2_PAGE_SIZE_HUGE_2MB = 0x1;
inline constexpr uint32_t NVOS32_ATTR2_PAGE_SIZE_HUGE_512MB = 0x2;
inline constexpr uint32_t NVOS32_ATTR2_PAGE_SIZE_HUGE_256GB = 0x3;
inline constexpr BitField NVOS32_ATTR2_PROTECTION_USER{22, 22};
inline constexpr uint32_t NVOS32_ATTR2_PROTECTION_USER_READ_WRITE = 0x0;
inline constexpr uint32_t NVOS32_ATTR2_PROTECTION_USER_READ_ONLY = 0x1;
inline constexpr BitField NVOS32_ATTR2_PROTECTION_DEVICE{23, 23};
inline constexpr uint32_t NVOS32_ATTR2_PROTECTION_DEVICE_READ_WRITE = 0x0;
inline constexpr uint32_t NVOS32_ATTR2_PROTECTION_DEVICE_READ_ONLY = 0x1;
inline constexpr BitField NVOS32_ATTR2_USE_EGM{24, 24};
inline constexpr uint32_t NVOS32_ATTR2_USE_EGM_FALSE = 0x0;
inline constexpr uint32_t NVOS32_ATTR2_USE_EGM_TRUE = 0x1;
inline constexpr BitField NVOS32_ATTR2_MEMORY_PROTECTION{26, 25};
inline constexpr uint32_t NVOS32_ATTR2_MEMORY_PROTECTION_DEFAULT = 0x0;
inline constexpr uint32_t NVOS32_ATTR2_MEMORY_PROTECTION_PROTECTED = 0x1;
inline constexpr uint32_t NVOS32_ATTR2_MEMORY_PROTECTION_UNPROTECTED = 0x2;
inline constexpr BitField NVOS32_ATTR2_ALLOCATE_FROM_SUBHEAP{27, 27};
inline constexpr uint32_t NVOS32_ATTR2_ALLOCATE_FROM_SUBHEAP_NO = 0x0;
inline constexpr uint32_t NVOS32_ATTR2_ALLOCATE_FROM_SUBHEAP_YES = 0x1;
inline constexpr BitField NVOS32_ATTR2_ENABLE_LOCALIZED_MEMORY{30, 29};
inline constexpr uint32_t NVOS32_ATTR2_ENABLE_LOCALIZED_MEMORY_DEFAULT = 0x0;
inline constexpr uint32_t NVOS32_ATTR2_ENABLE_LOCALIZED_MEMORY_UGPU0 = 0x1;
inline constexpr uint32_t NVOS32_ATTR2_ENABLE_LOCALIZED_MEMORY_UGPU1 = 0x2;
inline constexpr BitField NVOS32_ATTR2_REGISTER_MEMDESC_TO_PHYS_RM{31, 31};
inline constexpr uint32_t NVOS32_ATTR2_REGISTER_MEMDESC_TO_PHYS_RM_FALSE = 0x0;
inline constexpr uint32_t NVOS32_ATTR2_REGISTER_MEMDESC_TO_PHYS_RM_TRUE = 0x1;

// NVOS32_ALLOC_FLAGS_ bits (NV_MEMORY_ALLOCATION_PARAMS::flags); some bits have two names.
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_IGNORE_BANK_PLACEMENT = 0x1;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_FORCE_MEM_GROWS_UP = 0x2;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_FORCE_MEM_GROWS_DOWN = 0x4;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_FORCE_ALIGN_HOST_PAGE = 0x8;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_FIXED_ADDRESS_ALLOCATE = 0x10;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_BANK_HINT = 0x20;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_BANK_FORCE = 0x40;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_ALIGNMENT_HINT = 0x80;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_ALIGNMENT_FORCE = 0x100;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_BANK_GROW_UP = 0x0;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_BANK_GROW_DOWN = 0x200;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_LAZY = 0x400;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_FORCE_REVERSE_ALLOC = 0x800;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_NO_SCANOUT = 0x1000;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_PITCH_FORCE = 0x2000;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_MEMORY_HANDLE_PROVIDED = 0x4000;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_MAP_NOT_REQUIRED = 0x8000;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_PERSISTENT_VIDMEM = 0x10000;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_USE_BEGIN_END = 0x20000;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_TURBO_CIPHER_ENCRYPTED = 0x40000;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_VIRTUAL = 0x80000;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_FORCE_INTERNAL_INDEX = 0x100000;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_ZCULL_COVG_SPECIFIED = 0x200000;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_EXTERNALLY_MANAGED = 0x400000;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_FORCE_DEDICATED_PDE = 0x800000;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_PROTECTED = 0x1000000;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_KERNEL_MAPPING_MAP = 0x2000000;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_MAXIMIZE_ADDRESS_SPACE = 0x2000000;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_SPARSE = 0x4000000;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_USER_READ_ONLY = 0x4000000;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_DEVICE_READ_ONLY = 0x8000000;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_ALLOCATE_KERNEL_PRIVILEGED = 0x8000000;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_SKIP_RESOURCE_ALLOC = 0x10000000;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_PREFER_PTES_IN_SYSMEMORY = 0x20000000;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_SKIP_ALIGN_PAD = 0x40000000;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_WPR1 = 0x40000000;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_ZCULL_DONT_ALLOCATE_SHARED_1X = 0x80000000;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_WPR2 = 0x80000000;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_MAXIMIZE_4GB_ADDRESS_SPACE = 0x2000000;
inline constexpr uint32_t NVOS32_ALLOC_FLAGS_VIRTUAL_ONLY = 642253824;

}  // namespace nvl::nv
