/*
 * Entry points libcuda exports that include/nvlite/cuda.h does not declare:
 * those of NVIDIA's cudaProfiler.h, cudaGL.h, cudaEGL.h and cudaVDPAU.h.
 * nvlite exports them (lib/api/entry_points.txt) so that a program or a
 * binding that looks them up finds them, as with libcuda; the graphics ones
 * are stubs. The graphics libraries' types are stood in for by types of the
 * same size (facts from NVIDIA's headers and the GL, EGL and VDPAU headers);
 * nothing outside the library sees this file.
 *
 * One prototype a line, by exported symbol (no mapping macros), as in
 * cuda.h: tools/gen_entry_points.py reads it.
 */
#ifndef NVLITE_LIB_API_INTEROP_H
#define NVLITE_LIB_API_INTEROP_H

#include <stdint.h>

#include "nvlite/cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

/* cudaProfiler.h */
typedef enum CUoutput_mode_enum {
    CU_OUT_KEY_VALUE_PAIR = 0x00,
    CU_OUT_CSV = 0x01
} CUoutput_mode;

/* OpenGL (GL/gl.h) and cudaGL.h */
typedef unsigned int GLuint;
typedef unsigned int GLenum;
typedef enum CUGLDeviceList_enum {
    CU_GL_DEVICE_LIST_ALL = 0x01,
    CU_GL_DEVICE_LIST_CURRENT_FRAME = 0x02,
    CU_GL_DEVICE_LIST_NEXT_FRAME = 0x03
} CUGLDeviceList;

/* EGL (EGL/egl.h, EGL/eglext.h) and cudaEGL.h */
typedef void *EGLImageKHR;
typedef void *EGLStreamKHR;
typedef int32_t EGLint;
typedef struct CUeglStreamConnection_st *CUeglStreamConnection;
typedef struct CUeglFrame_st {
    union {
        struct CUarray_st *pArray[3];
        void *pPitch[3];
    } frame;
    unsigned int width;
    unsigned int height;
    unsigned int depth;
    unsigned int pitch;
    unsigned int planeCount;
    unsigned int numChannels;
    int frameType;      /* CUeglFrameType */
    int eglColorFormat; /* CUeglColorFormat */
    int cuFormat;       /* CUarray_format */
} CUeglFrame;

/* VDPAU (vdpau/vdpau.h) */
typedef uint32_t VdpDevice;
typedef uint32_t VdpVideoSurface;
typedef uint32_t VdpOutputSurface;
typedef int VdpGetProcAddress(uint32_t device, uint32_t function_id, void **function_pointer);

/* Profiler */
CUresult CUDAAPI cuProfilerInitialize(const char *configFile, const char *outputFile, CUoutput_mode outputMode);
CUresult CUDAAPI cuProfilerStart(void);
CUresult CUDAAPI cuProfilerStop(void);

/* OpenGL */
CUresult CUDAAPI cuGraphicsGLRegisterBuffer(struct CUgraphicsResource_st **pCudaResource, GLuint buffer, unsigned int Flags);
CUresult CUDAAPI cuGraphicsGLRegisterImage(struct CUgraphicsResource_st **pCudaResource, GLuint image, GLenum target, unsigned int Flags);
CUresult CUDAAPI cuGLGetDevices(unsigned int *pCudaDeviceCount, CUdevice *pCudaDevices, unsigned int cudaDeviceCount, CUGLDeviceList deviceList);
CUresult CUDAAPI cuGLGetDevices_v2(unsigned int *pCudaDeviceCount, CUdevice *pCudaDevices, unsigned int cudaDeviceCount, CUGLDeviceList deviceList);
CUresult CUDAAPI cuGLCtxCreate(CUcontext *pCtx, unsigned int Flags, CUdevice device);
CUresult CUDAAPI cuGLCtxCreate_v2(CUcontext *pCtx, unsigned int Flags, CUdevice device);
CUresult CUDAAPI cuGLInit(void);
CUresult CUDAAPI cuGLRegisterBufferObject(GLuint buffer);
CUresult CUDAAPI cuGLMapBufferObject(unsigned int *dptr, unsigned int *size, GLuint buffer);
CUresult CUDAAPI cuGLMapBufferObject_v2(CUdeviceptr *dptr, size_t *size, GLuint buffer);
CUresult CUDAAPI cuGLMapBufferObject_v2_ptds(CUdeviceptr *dptr, size_t *size, GLuint buffer);
CUresult CUDAAPI cuGLUnmapBufferObject(GLuint buffer);
CUresult CUDAAPI cuGLUnregisterBufferObject(GLuint buffer);
CUresult CUDAAPI cuGLSetBufferObjectMapFlags(GLuint buffer, unsigned int Flags);
CUresult CUDAAPI cuGLMapBufferObjectAsync(unsigned int *dptr, unsigned int *size, GLuint buffer, CUstream hStream);
CUresult CUDAAPI cuGLMapBufferObjectAsync_v2(CUdeviceptr *dptr, size_t *size, GLuint buffer, CUstream hStream);
CUresult CUDAAPI cuGLMapBufferObjectAsync_v2_ptsz(CUdeviceptr *dptr, size_t *size, GLuint buffer, CUstream hStream);
CUresult CUDAAPI cuGLUnmapBufferObjectAsync(GLuint buffer, CUstream hStream);

/* EGL */
CUresult CUDAAPI cuGraphicsEGLRegisterImage(struct CUgraphicsResource_st **pCudaResource, EGLImageKHR image, unsigned int flags);
CUresult CUDAAPI cuEGLStreamConsumerConnect(CUeglStreamConnection *conn, EGLStreamKHR stream);
CUresult CUDAAPI cuEGLStreamConsumerConnectWithFlags(CUeglStreamConnection *conn, EGLStreamKHR stream, unsigned int flags);
CUresult CUDAAPI cuEGLStreamConsumerDisconnect(CUeglStreamConnection *conn);
CUresult CUDAAPI cuEGLStreamConsumerAcquireFrame(CUeglStreamConnection *conn, struct CUgraphicsResource_st **pCudaResource, CUstream *pStream, unsigned int timeout);
CUresult CUDAAPI cuEGLStreamConsumerReleaseFrame(CUeglStreamConnection *conn, struct CUgraphicsResource_st *pCudaResource, CUstream *pStream);
CUresult CUDAAPI cuEGLStreamProducerConnect(CUeglStreamConnection *conn, EGLStreamKHR stream, EGLint width, EGLint height);
CUresult CUDAAPI cuEGLStreamProducerDisconnect(CUeglStreamConnection *conn);
CUresult CUDAAPI cuEGLStreamProducerPresentFrame(CUeglStreamConnection *conn, CUeglFrame eglframe, CUstream *pStream);
CUresult CUDAAPI cuEGLStreamProducerReturnFrame(CUeglStreamConnection *conn, CUeglFrame *eglframe, CUstream *pStream);
CUresult CUDAAPI cuGraphicsResourceGetMappedEglFrame(CUeglFrame *eglFrame, struct CUgraphicsResource_st *resource, unsigned int index, unsigned int mipLevel);

/* VDPAU */
CUresult CUDAAPI cuVDPAUGetDevice(CUdevice *pDevice, VdpDevice vdpDevice, VdpGetProcAddress *vdpGetProcAddress);
CUresult CUDAAPI cuVDPAUCtxCreate(CUcontext *pCtx, unsigned int flags, CUdevice device, VdpDevice vdpDevice, VdpGetProcAddress *vdpGetProcAddress);
CUresult CUDAAPI cuVDPAUCtxCreate_v2(CUcontext *pCtx, unsigned int flags, CUdevice device, VdpDevice vdpDevice, VdpGetProcAddress *vdpGetProcAddress);
CUresult CUDAAPI cuGraphicsVDPAURegisterVideoSurface(struct CUgraphicsResource_st **pCudaResource, VdpVideoSurface vdpSurface, unsigned int flags);
CUresult CUDAAPI cuGraphicsVDPAURegisterOutputSurface(struct CUgraphicsResource_st **pCudaResource, VdpOutputSurface vdpSurface, unsigned int flags);

#ifdef __cplusplus
}
#endif

#endif /* NVLITE_LIB_API_INTEROP_H */
