#!/usr/bin/env python3
"""Write data/error-catalog.tsv: every status code of the CUDA runtime
(cudaError_t) and driver API (CUresult), read from the enums of the CUDA
headers (driver_types.h, cuda.h), plus the status codes of cuBLAS/cuBLASLt,
cuDNN, cuFFT, cuSOLVER, NCCL and HIP listed below from their headers.

usage: tools/gen-error-catalog.py INCLUDE_DIR > data/error-catalog.tsv
INCLUDE_DIR holds driver_types.h and cuda.h (for example the include/
folder of the nvidia-cuda-runtime-cu12 wheel, 12.9.79).

Only names, numbers and the short strings the libraries print are facts
taken from the headers; the meaning column is ours: a hand-written line
for the codes users meet, else the enum name split into words
("cudaErrorInvalidPitchValue" -> "invalid pitch value").
"""
import re
import sys

RT_SRC = "CUDA runtime API, driver_types.h enum cudaError (CUDA 12.9, nvidia-cuda-runtime-cu12 12.9.79); https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html"
DRV_SRC = "CUDA driver API, cuda.h enum cudaError_enum (CUDA 12.9, nvidia-cuda-runtime-cu12 12.9.79); https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html"

# diagnosis: the errors.tsv id whose causes and fixes apply; message: what
# cudaGetErrorString / the framework prints (empty: the name is what users see)
RT = {
    "cudaErrorInvalidValue": ("", "invalid argument", "a CUDA call got an argument out of range (often a bad size or a freed pointer)"),
    "cudaErrorMemoryAllocation": ("cuda-oom", "out of memory", "the GPU (or the CUDA driver on WSL, at initialisation) could not allocate memory"),
    "cudaErrorInitializationError": ("cuda-unknown-error", "initialization error", "the CUDA driver and runtime could not be initialised"),
    "cudaErrorCudartUnloading": ("", "driver shutting down", "a CUDA call ran while the runtime was unloading (at process exit)"),
    "cudaErrorInvalidConfiguration": ("", "invalid configuration argument", "a kernel launch asked for more threads, blocks or shared memory than the GPU allows"),
    "cudaErrorInvalidDeviceFunction": ("arch-unsupported", "invalid device function", "the kernel has no code for this GPU's architecture"),
    "cudaErrorInvalidDevice": ("invalid-device", "invalid device ordinal", "the device index does not exist (CUDA_VISIBLE_DEVICES hides it, or the GPU is gone)"),
    "cudaErrorInsufficientDriver": ("driver-too-old", "CUDA driver version is insufficient for CUDA runtime version", "the driver is older than the CUDA runtime the program uses"),
    "cudaErrorNoDevice": ("no-cuda-device", "no CUDA-capable device is detected", "the runtime sees no GPU"),
    "cudaErrorNoKernelImageForDevice": ("arch-unsupported", "no kernel image is available for execution on the device", "the binary has no SASS or usable PTX for this GPU"),
    "cudaErrorDevicesUnavailable": ("device-busy", "CUDA-capable device(s) is/are busy or unavailable", "the GPU is in exclusive-process mode and taken, or unavailable"),
    "cudaErrorIllegalAddress": ("illegal-memory-access", "an illegal memory access was encountered", "a kernel read or wrote outside its memory"),
    "cudaErrorLaunchFailure": ("launch-failure", "unspecified launch failure", "a kernel crashed on the device"),
    "cudaErrorAssert": ("device-assert", "device-side assert triggered", "a kernel assertion failed (usually an index out of range)"),
    "cudaErrorLaunchOutOfResources": ("", "too many resources requested for launch", "the kernel needs more registers or shared memory per block than available"),
    "cudaErrorLaunchTimeout": ("", "the launch timed out and was terminated", "the display watchdog killed a long kernel (a GPU that also drives a display)"),
    "cudaErrorECCUncorrectable": ("ecc-error", "uncorrectable ECC error encountered", "the GPU memory reported an uncorrectable error"),
    "cudaErrorPeerAccessUnsupported": ("p2p-unsupported", "peer access is not supported between these two devices", "the two GPUs cannot access each other's memory"),
    "cudaErrorCompatNotSupportedOnDevice": ("driver-too-old", "forward compatibility was attempted on non supported HW", "the cuda-compat libcuda works only on data-center GPUs"),
    "cudaErrorSystemDriverMismatch": ("driver-library-mismatch", "system has unsupported display driver / cuda driver combination", "the kernel driver and libcuda versions differ"),
    "cudaErrorUnsupportedPtxVersion": ("driver-too-old", "the provided PTX was compiled with an unsupported toolchain.", "the PTX is newer than this driver can JIT-compile"),
    "cudaErrorJitCompilerNotFound": ("", "PTX JIT compiler library not found", "libnvidia-ptxjitcompiler is missing from the driver install"),
    "cudaErrorIllegalInstruction": ("launch-failure", "an illegal instruction was encountered", "a kernel executed an illegal instruction"),
    "cudaErrorMisalignedAddress": ("illegal-memory-access", "misaligned address", "a kernel accessed memory at a misaligned address"),
    "cudaErrorHardwareStackError": ("launch-failure", "hardware stack error", "a kernel overflowed its call stack"),
    "cudaErrorNotSupported": ("", "operation not supported", "the operation is not supported on this GPU, driver or platform (WSL lacks some)"),
    "cudaErrorSystemNotReady": ("fabric-manager", "system not yet initialized", "the system is not ready: on NVSwitch systems the fabric manager is not running"),
    "cudaErrorStreamCaptureUnsupported": ("", "operation not permitted when stream is capturing", "a call not allowed during CUDA graph capture"),
    "cudaErrorMpsConnectionFailed": ("", "MPS client failed to connect to the MPS control daemon or the MPS server", "the MPS daemon is not running or not reachable"),
    "cudaErrorUnknown": ("cuda-unknown-error", "unknown error", "an unknown internal error: after suspend/resume, a wedged driver, or (WSL) the Windows driver"),
    "cudaErrorInvalidResourceHandle": ("", "invalid resource handle", "a stream, event or context handle is not valid in this context"),
    "cudaErrorContextIsDestroyed": ("", "context is destroyed", "the CUDA context was destroyed (after an earlier fatal error)"),
    "cudaErrorInvalidPtx": ("driver-too-old", "a PTX JIT compilation failed", "the PTX could not be compiled by this driver"),
    "cudaErrorSharedObjectInitFailed": ("", "shared object initialization failed", "a CUDA library failed to initialise (often a driver/runtime mismatch)"),
    "cudaErrorOperatingSystem": ("", "OS call failed or operation not supported on this OS", "an OS call failed (a container without the right devices, or WSL)"),
    "cudaErrorInvalidKernelImage": ("arch-unsupported", "device kernel image is invalid", "the kernel image is corrupt or for another GPU"),
    "cudaErrorCallRequiresNewerDriver": ("driver-too-old", "API call is not supported in the installed CUDA driver", "the program calls a CUDA function this driver does not have"),
    "cudaErrorTimeout": ("", "timeout", "a wait timed out"),
}
DRV = {
    "CUDA_ERROR_OUT_OF_MEMORY": ("cuda-oom", "out of memory"),
    "CUDA_ERROR_NOT_INITIALIZED": ("cuda-unknown-error", "initialization error"),
    "CUDA_ERROR_NO_DEVICE": ("no-cuda-device", "no CUDA-capable device is detected"),
    "CUDA_ERROR_INVALID_DEVICE": ("invalid-device", "invalid device ordinal"),
    "CUDA_ERROR_NO_BINARY_FOR_GPU": ("arch-unsupported", "no kernel image is available for execution on the device"),
    "CUDA_ERROR_ILLEGAL_ADDRESS": ("illegal-memory-access", "an illegal memory access was encountered"),
    "CUDA_ERROR_LAUNCH_FAILED": ("launch-failure", "unspecified launch failure"),
    "CUDA_ERROR_ASSERT": ("device-assert", "device-side assert triggered"),
    "CUDA_ERROR_ECC_UNCORRECTABLE": ("ecc-error", "uncorrectable ECC error encountered"),
    "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED": ("p2p-unsupported", "peer access is not supported between these two devices"),
    "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE": ("driver-too-old", "forward compatibility was attempted on non supported HW"),
    "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH": ("driver-library-mismatch", "system has unsupported display driver / cuda driver combination"),
    "CUDA_ERROR_UNSUPPORTED_PTX_VERSION": ("driver-too-old", "the provided PTX was compiled with an unsupported toolchain."),
    "CUDA_ERROR_SYSTEM_NOT_READY": ("fabric-manager", "system not yet initialized"),
    "CUDA_ERROR_UNKNOWN": ("cuda-unknown-error", "unknown error"),
    "CUDA_ERROR_DEVICE_UNAVAILABLE": ("device-busy", "CUDA-capable device(s) is/are busy or unavailable"),
    "CUDA_ERROR_ILLEGAL_INSTRUCTION": ("launch-failure", "an illegal instruction was encountered"),
    "CUDA_ERROR_MISALIGNED_ADDRESS": ("illegal-memory-access", "misaligned address"),
    "CUDA_ERROR_INVALID_PTX": ("driver-too-old", "a PTX JIT compilation failed"),
    "CUDA_ERROR_INVALID_IMAGE": ("arch-unsupported", "device kernel image is invalid"),
}

# (family, name, code, diagnosis, message, meaning, source)
LIBS = []
CUBLAS_SRC = "cuBLAS cublas_api.h cublasStatus_t (also cuBLASLt); https://docs.nvidia.com/cuda/cublas/index.html#cublasstatus-t"
for name, code, diag, meaning in [
    ("CUBLAS_STATUS_SUCCESS", 0, "", "success"),
    ("CUBLAS_STATUS_NOT_INITIALIZED", 1, "cublas-error", "cuBLAS could not create its handle: usually the GPU is out of memory when the handle is made"),
    ("CUBLAS_STATUS_ALLOC_FAILED", 3, "cublas-error", "cuBLAS could not allocate GPU memory"),
    ("CUBLAS_STATUS_INVALID_VALUE", 7, "cublas-error", "an unsupported value or shape was passed (a dtype or leading dimension the routine rejects)"),
    ("CUBLAS_STATUS_ARCH_MISMATCH", 8, "cublas-error", "the routine needs a feature this GPU lacks (a dtype such as bf16 on an old GPU)"),
    ("CUBLAS_STATUS_MAPPING_ERROR", 11, "cublas-error", "accessing GPU memory space failed"),
    ("CUBLAS_STATUS_EXECUTION_FAILED", 13, "cublas-error", "the GPU kernel failed to launch or run (often an earlier fault, a driver/library mismatch or a dtype the GPU lacks)"),
    ("CUBLAS_STATUS_INTERNAL_ERROR", 14, "cublas-error", "an internal cuBLAS operation failed (often out of memory or an earlier asynchronous error)"),
    ("CUBLAS_STATUS_NOT_SUPPORTED", 15, "cublas-error", "the functionality is not supported (for this GPU, dtype or layout)"),
    ("CUBLAS_STATUS_LICENSE_ERROR", 16, "cublas-error", "a licence check failed"),
]:
    LIBS.append(("cublas", name, code, diag, "", meaning, CUBLAS_SRC))
CUDNN_SRC = "cuDNN 8 cudnn_ops_infer.h cudnnStatus_t; https://docs.nvidia.com/deeplearning/cudnn/archives/cudnn-890/api/index.html"
for name, code, meaning in [
    ("CUDNN_STATUS_SUCCESS", 0, "success"),
    ("CUDNN_STATUS_NOT_INITIALIZED", 1, "cuDNN was not initialised: usually the GPU ran out of memory creating the handle, or the driver is too old for this cuDNN"),
    ("CUDNN_STATUS_ALLOC_FAILED", 2, "cuDNN could not allocate memory"),
    ("CUDNN_STATUS_BAD_PARAM", 3, "an incorrect value or parameter was passed"),
    ("CUDNN_STATUS_INTERNAL_ERROR", 4, "an internal cuDNN operation failed (often out of memory)"),
    ("CUDNN_STATUS_INVALID_VALUE", 5, "an invalid value was passed"),
    ("CUDNN_STATUS_ARCH_MISMATCH", 6, "the function needs a feature this GPU lacks"),
    ("CUDNN_STATUS_MAPPING_ERROR", 7, "accessing GPU memory failed (often a texture binding)"),
    ("CUDNN_STATUS_EXECUTION_FAILED", 8, "the GPU program failed to run"),
    ("CUDNN_STATUS_NOT_SUPPORTED", 9, "the configuration is not supported by cuDNN (shape, layout or dtype; sometimes out of memory)"),
    ("CUDNN_STATUS_LICENSE_ERROR", 10, "a licence check failed"),
    ("CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING", 11, "a runtime library cuDNN needs is missing or too old"),
    ("CUDNN_STATUS_RUNTIME_IN_PROGRESS", 12, "asynchronous work is still in progress"),
    ("CUDNN_STATUS_RUNTIME_FP_OVERFLOW", 13, "a numerical overflow occurred"),
    ("CUDNN_STATUS_VERSION_MISMATCH", 14, "the cuDNN sub-libraries have different versions (two cuDNN installations mixed)"),
]:
    LIBS.append(("cudnn", name, code, "cudnn-error", "", meaning, CUDNN_SRC))
CUFFT_SRC = "cuFFT cufft.h cufftResult; https://docs.nvidia.com/cuda/cufft/index.html#cufftresult"
for name, code, meaning in [
    ("CUFFT_SUCCESS", 0, "success"), ("CUFFT_INVALID_PLAN", 1, "the plan handle is invalid"),
    ("CUFFT_ALLOC_FAILED", 2, "cuFFT could not allocate GPU memory"), ("CUFFT_INVALID_TYPE", 3, "unsupported transform type"),
    ("CUFFT_INVALID_VALUE", 4, "an invalid pointer or parameter was passed"),
    ("CUFFT_INTERNAL_ERROR", 5, "a driver or internal cuFFT error: classically a cuFFT too old for the GPU (CUDA 11.7 wheels on RTX 40), or out of memory"),
    ("CUFFT_EXEC_FAILED", 6, "the FFT failed to execute on the GPU"), ("CUFFT_SETUP_FAILED", 7, "the cuFFT library failed to initialise"),
    ("CUFFT_INVALID_SIZE", 8, "an unsupported transform size"), ("CUFFT_UNALIGNED_DATA", 9, "input or output data is not aligned"),
    ("CUFFT_INCOMPLETE_PARAMETER_LIST", 10, "missing parameters in the call"),
    ("CUFFT_INVALID_DEVICE", 11, "the plan was executed on another GPU than it was created on"),
    ("CUFFT_PARSE_ERROR", 12, "internal plan database error"), ("CUFFT_NO_WORKSPACE", 13, "no workspace was provided before execution"),
    ("CUFFT_NOT_IMPLEMENTED", 14, "not implemented for these parameters"), ("CUFFT_LICENSE_ERROR", 15, "a licence check failed"),
    ("CUFFT_NOT_SUPPORTED", 16, "the operation is not supported for these parameters"),
]:
    LIBS.append(("cufft", name, code, "cufft-error", "", meaning, CUFFT_SRC))
CUSOLVER_SRC = "cuSOLVER cusolver_common.h cusolverStatus_t; https://docs.nvidia.com/cuda/cusolver/index.html#cusolverstatus-t"
for name, code, meaning in [
    ("CUSOLVER_STATUS_SUCCESS", 0, "success"), ("CUSOLVER_STATUS_NOT_INITIALIZED", 1, "cuSOLVER was not initialised"),
    ("CUSOLVER_STATUS_ALLOC_FAILED", 2, "cuSOLVER could not allocate memory"), ("CUSOLVER_STATUS_INVALID_VALUE", 3, "an invalid parameter was passed"),
    ("CUSOLVER_STATUS_ARCH_MISMATCH", 4, "the GPU lacks a feature the routine needs"), ("CUSOLVER_STATUS_MAPPING_ERROR", 5, "GPU memory mapping failed"),
    ("CUSOLVER_STATUS_EXECUTION_FAILED", 6, "the GPU program failed to run"),
    ("CUSOLVER_STATUS_INTERNAL_ERROR", 7, "an internal cuSOLVER operation failed: usually out of GPU memory when the handle is created, or a cuSOLVER too old for the GPU"),
    ("CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED", 8, "the matrix type is not supported"), ("CUSOLVER_STATUS_NOT_SUPPORTED", 9, "not supported"),
    ("CUSOLVER_STATUS_ZERO_PIVOT", 10, "a zero pivot was met (a singular matrix)"), ("CUSOLVER_STATUS_INVALID_LICENSE", 11, "a licence check failed"),
]:
    LIBS.append(("cusolver", name, code, "cusolver-error", "", meaning, CUSOLVER_SRC))
NCCL_SRC = "NCCL nccl.h ncclResult_t and ncclGetErrorString; https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/api/types.html#ncclresult-t"
for name, code, msg, diag, meaning in [
    ("ncclSuccess", 0, "no error", "", "success"),
    ("ncclUnhandledCudaError", 1, "unhandled cuda error", "nccl-error", "a CUDA call inside NCCL failed: the CUDA error it names is the cause"),
    ("ncclSystemError", 2, "unhandled system error", "nccl-error", "a system call failed (socket, shared memory, /dev/shm too small in a container)"),
    ("ncclInternalError", 3, "internal error", "nccl-error", "an internal NCCL check failed"),
    ("ncclInvalidArgument", 4, "invalid argument", "nccl-error", "a bad argument was passed to NCCL"),
    ("ncclInvalidUsage", 5, "invalid usage", "nccl-error", "NCCL was called wrongly (for example two ranks on one GPU)"),
    ("ncclRemoteError", 6, "remote process exited or there was a network error", "nccl-error", "another rank died or the network failed"),
    ("ncclInProgress", 7, "NCCL operation in progress", "", "a non-blocking operation is still running"),
]:
    LIBS.append(("nccl", name, code, diag, msg, meaning, NCCL_SRC))
HIP_SRC = "HIP hip_runtime_api.h hipError_t (ROCm/HIP); https://rocm.docs.amd.com/projects/HIP/en/latest/reference/error_codes.html"
for name, code, msg, diag, meaning in [
    ("hipErrorInvalidValue", 1, "invalid argument", "", "an invalid argument"),
    ("hipErrorOutOfMemory", 2, "out of memory", "", "the GPU ran out of memory"),
    ("hipErrorNotInitialized", 3, "initialization error", "", "the HIP runtime could not initialise"),
    ("hipErrorInsufficientDriver", 35, "CUDA driver version is insufficient for CUDA runtime version", "", "the ROCm driver is older than the runtime"),
    ("hipErrorInvalidDeviceFunction", 98, "invalid device function", "hip-no-binary", "the kernel has no code object for this GPU's gfx target"),
    ("hipErrorNoDevice", 100, "no ROCm-capable device is detected", "", "HIP sees no GPU (permissions on /dev/kfd and /dev/dri, or no ROCm driver)"),
    ("hipErrorInvalidDevice", 101, "invalid device ordinal", "", "the device index does not exist"),
    ("hipErrorInvalidImage", 200, "device kernel image is invalid", "hip-no-binary", "the code object is invalid or for another GPU"),
    ("hipErrorNoBinaryForGpu", 209, "no kernel image is available for execution on the device", "hip-no-binary", "the program ships no code object for this GPU's gfx target"),
    ("hipErrorIllegalAddress", 700, "an illegal memory access was encountered", "", "a kernel accessed memory outside its allocation"),
    ("hipErrorLaunchOutOfResources", 701, "too many resources requested for launch", "", "the kernel needs more resources than available"),
    ("hipErrorAssert", 710, "device-side assert triggered", "device-assert", "a kernel assertion failed"),
    ("hipErrorLaunchFailure", 719, "unspecified launch failure", "", "a kernel crashed"),
    ("hipErrorNotSupported", 801, "operation not supported", "", "not supported on this GPU or platform"),
    ("hipErrorUnknown", 999, "unknown error", "", "an unknown error"),
]:
    LIBS.append(("hip", name, code, diag, msg, meaning, HIP_SRC))

# every other hipError_t value (hip_runtime_api.h, ROCm 6): name = number
HIP_ALL = """hipErrorDeinitialized=4 hipErrorProfilerDisabled=5 hipErrorProfilerNotInitialized=6
hipErrorProfilerAlreadyStarted=7 hipErrorProfilerAlreadyStopped=8 hipErrorInvalidConfiguration=9
hipErrorInvalidPitchValue=12 hipErrorInvalidSymbol=13 hipErrorInvalidDevicePointer=17
hipErrorInvalidMemcpyDirection=21 hipErrorMissingConfiguration=52 hipErrorPriorLaunchFailure=53
hipErrorInvalidContext=201 hipErrorContextAlreadyCurrent=202 hipErrorMapFailed=205 hipErrorUnmapFailed=206
hipErrorArrayIsMapped=207 hipErrorAlreadyMapped=208 hipErrorAlreadyAcquired=210 hipErrorNotMapped=211
hipErrorNotMappedAsArray=212 hipErrorNotMappedAsPointer=213 hipErrorECCNotCorrectable=214
hipErrorUnsupportedLimit=215 hipErrorContextAlreadyInUse=216 hipErrorPeerAccessUnsupported=217
hipErrorInvalidKernelFile=218 hipErrorInvalidGraphicsContext=219 hipErrorInvalidSource=300
hipErrorFileNotFound=301 hipErrorSharedObjectSymbolNotFound=302 hipErrorSharedObjectInitFailed=303
hipErrorOperatingSystem=304 hipErrorInvalidHandle=400 hipErrorIllegalState=401 hipErrorNotFound=500
hipErrorNotReady=600 hipErrorLaunchTimeOut=702 hipErrorPeerAccessAlreadyEnabled=704
hipErrorPeerAccessNotEnabled=705 hipErrorSetOnActiveProcess=708 hipErrorContextIsDestroyed=709
hipErrorHostMemoryAlreadyRegistered=712 hipErrorHostMemoryNotRegistered=713
hipErrorCooperativeLaunchTooLarge=720 hipErrorStreamCaptureUnsupported=900
hipErrorStreamCaptureInvalidated=901 hipErrorStreamCaptureMerge=902 hipErrorStreamCaptureUnmatched=903
hipErrorStreamCaptureUnjoined=904 hipErrorStreamCaptureIsolation=905 hipErrorStreamCaptureImplicit=906
hipErrorCapturedEvent=907 hipErrorStreamCaptureWrongThread=908 hipErrorGraphExecUpdateFailure=910
hipErrorRuntimeMemory=1052 hipErrorRuntimeOther=1053"""
have = {n for _, n, *_ in LIBS}
for item in HIP_ALL.split():
    name, code = item.split("=")
    if name not in have:
        diag = "ecc-error" if name == "hipErrorECCNotCorrectable" else ""
        LIBS.append(("hip", name, int(code), diag, "", None, HIP_SRC))


def words(name, prefix):
    s = name[len(prefix):]
    if "_" in s:
        return s.replace("_", " ").lower()
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", s).lower()


def enum(path, pattern, entry):
    src = open(path).read()
    body = re.search(pattern, src, re.S).group(1)
    return re.findall(entry, body)


def main():
    inc = sys.argv[1]
    rows = []
    rt = enum(f"{inc}/driver_types.h", r"enum __device_builtin__ cudaError\s*\{(.*?)\};", r"\b(cuda(?:Success|Error\w+))\s*=\s*(\d+)")
    for name, code in rt:
        if name in ("cudaErrorApiFailureBase",):
            continue
        diag, msg, meaning = RT.get(name, ("", "", ""))
        if name == "cudaSuccess":
            meaning = "success"
        rows.append(("cuda-runtime", name, code, diag, msg, meaning or words(name, "cudaError") + " [meaning derived from the name]", RT_SRC))
    drv = enum(f"{inc}/cuda.h", r"typedef enum cudaError_enum\s*\{(.*?)\}\s*CUresult;", r"\b(CUDA_(?:SUCCESS|ERROR_\w+))\s*=\s*(\d+)")
    for name, code in drv:
        diag, msg = DRV.get(name, ("", ""))
        rows.append(("cuda-driver", name, code, diag, msg, words(name, "CUDA_ERROR_") + " [meaning derived from the name]" if name != "CUDA_SUCCESS" else "success", DRV_SRC))
    rows += [(f, n, str(c), d, m, mean or words(n, "hipError") + " [meaning derived from the name]", s)
             for f, n, c, d, m, mean, s in LIBS]
    print("# Status codes of the CUDA runtime and driver API, cuBLAS/cuBLASLt, cuDNN, cuFFT, cuSOLVER,")
    print("# NCCL and HIP: explain recognises each name (and 'CUDA error N' / 'Cuda failure N' numbers)")
    print("# in a message even when no signature of errors.tsv matches.  Generated by")
    print("# tools/gen-error-catalog.py from the headers named in each row's source.")
    print("# diagnosis: the errors.tsv id whose causes and fixes apply (empty: the row alone);")
    print("# message: the text the library prints for the code, when it has one.")
    print("family\tname\tcode\tdiagnosis\tmessage\tmeaning\tsource")
    for r in rows:
        print("\t".join(r))


main()
