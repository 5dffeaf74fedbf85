/* device_query: what the driver API says about each GPU. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

#include "sample.h"

static int attr(CUdevice dev, CUdevice_attribute a) {
    int v = 0;
    CHECK(cuDeviceGetAttribute(&v, a, dev));
    return v;
}

int main(void) {
    int version = 0, count = 0;
    CHECK(cuInit(0));
    CHECK(cuDriverGetVersion(&version));
    CHECK(cuDeviceGetCount(&count));
    printf("driver API version %d.%d, %d device(s)\n", version / 1000, (version % 1000) / 10, count);
    for (int i = 0; i < count; ++i) {
        CUdevice dev;
        char name[256], bus[32];
        size_t total = 0;
        CUuuid uuid;
        CHECK(cuDeviceGet(&dev, i));
        CHECK(cuDeviceGetName(name, sizeof name, dev));
        CHECK(cuDeviceTotalMem(&total, dev));
        CHECK(cuDeviceGetPCIBusId(bus, sizeof bus, dev));
        CHECK(cuDeviceGetUuid(&uuid, dev));
        printf("\ndevice %d: %s\n", i, name);
        printf("  UUID                         GPU-");
        for (int b = 0; b < 16; ++b) {
            printf("%02x", (unsigned char)uuid.bytes[b]);
            if (b == 3 || b == 5 || b == 7 || b == 9) printf("-");
        }
        printf("\n");
        printf("  PCI bus id                   %s\n", bus);
        printf("  compute capability           %d.%d\n", attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
               attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
        printf("  total memory                 %zu MiB (%zu bytes)\n", total >> 20, total);
        printf("  multiprocessors              %d\n", attr(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
        printf("  SM clock                     %d MHz\n", attr(dev, CU_DEVICE_ATTRIBUTE_CLOCK_RATE) / 1000);
        printf("  memory clock                 %d MHz\n", attr(dev, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE) / 1000);
        printf("  memory bus width             %d bits\n", attr(dev, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH));
        printf("  L2 cache                     %d KiB\n", attr(dev, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE) / 1024);
        printf("  warp size                    %d\n", attr(dev, CU_DEVICE_ATTRIBUTE_WARP_SIZE));
        printf("  max threads per block        %d\n", attr(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK));
        printf("  max threads per SM           %d\n", attr(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR));
        printf("  max block                    %d x %d x %d\n", attr(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X),
               attr(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y), attr(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z));
        printf("  max grid                     %d x %d x %d\n", attr(dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X),
               attr(dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y), attr(dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z));
        printf("  shared memory per block      %d bytes (opt-in %d)\n",
               attr(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK),
               attr(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN));
        printf("  shared memory per SM         %d bytes\n", attr(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR));
        printf("  registers per block          %d\n", attr(dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK));
        printf("  constant memory              %d bytes\n", attr(dev, CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY));
        printf("  async engines                %d\n", attr(dev, CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT));
        printf("  unified addressing           %d\n", attr(dev, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING));
        printf("  concurrent kernels           %d\n", attr(dev, CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS));
        printf("  integrated                   %d\n", attr(dev, CU_DEVICE_ATTRIBUTE_INTEGRATED));
        printf("  compute mode                 %d\n", attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_MODE));
        printf("  PCI domain/bus/device        %d/%d/%d\n", attr(dev, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID),
               attr(dev, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID), attr(dev, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID));
    }
    return 0;
}
