#include "loader/jit_process.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/trace.h"
#include "loader/nvjitlink.h"

extern char** environ;

namespace nvl::loader::jitproc {

namespace {

// ------------------------------------------------------------------ wire
//
// Client -> worker: Request, then 'bytes' of payload.
// Worker -> client: once a Hello; per request a ReplyHeader, then the info
// log, the error log and the cubin.

constexpr uint32_t kMagic = 0x4a4c564e;  // "NVLJ"
constexpr uint32_t kOpCreate = 1, kOpAdd = 2, kOpComplete = 3, kOpReset = 4;

struct Hello {
    uint32_t magic;
    int32_t pid;
};

struct Request {
    uint32_t op;
    uint32_t arg;         // create: argument count; add: input type
    uint64_t bytes;
    double seconds;       // the call's limit
    uint64_t memoryBytes; // create: the worker's address space
};

struct ReplyHeader {
    uint32_t magic;
    int32_t rc;
    uint64_t infoBytes, errorBytes, cubinBytes;
};

// Nothing a worker sends is trusted beyond these.
constexpr uint64_t kMaxLogBytes = 64ull << 20;
constexpr uint64_t kMaxCubinBytes = 1ull << 31;
constexpr uint64_t kMaxPayloadBytes = 1ull << 34;
// Starting a worker and the transfers around a call.
constexpr double kStartSeconds = 10;
constexpr double kTransferSlackSeconds = 2;
// Idle workers kept for later sessions, and how many sessions one serves:
// nvJitLink's first session in a process costs ~100 ms of set-up (and a
// fresh fork still pays for touching its memory), a later one a few ms.
constexpr size_t kMaxIdleWorkers = 2;
constexpr int kMaxSessionsPerWorker = 100;
constexpr double kResetSeconds = 2;
// Sessions alive at once (each holds a worker process): more than this at
// the same time are refused instead of filling the process table.
constexpr int kMaxSessions = 256;
std::atomic<int> liveSessions{0};

double now() { return static_cast<double>(monotonicNs()) / 1e9; }

// Waits until 'fd' is ready for 'events' or the deadline passes.
bool waitFor(int fd, short events, double deadline) {
    for (;;) {
        const double left = deadline - now();
        if (left <= 0) return false;
        pollfd p{fd, events, 0};
        const int ms = static_cast<int>(std::min(left * 1000 + 1, 1e9));
        const int r = ::poll(&p, 1, ms);
        if (r > 0) return true;
        if (r < 0 && errno != EINTR) return false;
    }
}

// MSG_NOSIGNAL: a closed peer is an error, never a SIGPIPE in the user's process.
bool sendAll(int fd, const void* data, size_t n, double deadline) {
    const auto* p = static_cast<const uint8_t*>(data);
    while (n) {
        if (!waitFor(fd, POLLOUT, deadline)) return false;
        const ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            return false;
        }
        p += w;
        n -= static_cast<size_t>(w);
    }
    return true;
}

bool recvAll(int fd, void* data, size_t n, double deadline) {
    auto* p = static_cast<uint8_t*>(data);
    while (n) {
        if (!waitFor(fd, POLLIN, deadline)) return false;
        const ssize_t r = ::recv(fd, p, n, MSG_DONTWAIT);
        if (r == 0) return false;  // the peer is gone
        if (r < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            return false;
        }
        p += r;
        n -= static_cast<size_t>(r);
    }
    return true;
}

// The worker's side has no deadline: its own alarm ends it.
constexpr double kForever = 1e300;

// ------------------------------------------------------------------ worker

bool sanitizedBuild() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
    return true;
#else
    return false;
#endif
#else
    return false;
#endif
}

// The session's address space (a soft limit: the next session of this
// worker may have another).
// The limit is on top of what the worker has mapped already: a worker forked
// from the user's process (no nvlite-jit program found) inherits its address
// space, GPU address reservations included, which can be far above any limit.
uint64_t mappedBytes() {
    FILE* f = std::fopen("/proc/self/statm", "re");
    if (!f) return 0;
    unsigned long long pages = 0;
    const int n = std::fscanf(f, "%llu", &pages);
    std::fclose(f);
    return n == 1 ? pages * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)) : 0;
}

void limitMemory(uint64_t bytes) {
    // Sanitizer runtimes reserve terabytes of shadow: no address-space cap there.
    if (!bytes || sanitizedBuild()) return;
    const uint64_t mapped = mappedBytes();
    const uint64_t want = mapped > ~0ull - bytes ? ~0ull : mapped + bytes;
    rlimit as{};
    ::getrlimit(RLIMIT_AS, &as);
    as.rlim_cur = as.rlim_max == RLIM_INFINITY ? want : std::min<rlim_t>(want, as.rlim_max);
    ::setrlimit(RLIMIT_AS, &as);
}

// The call's time: an alarm ends the worker (its default action), and a
// CPU limit (soft, so that a later call can have more) backs it up.
void limitTime(double seconds) {
    const double s = std::ceil(std::min(std::max(seconds, 1.0), 1e6));
    ::alarm(static_cast<unsigned>(s));
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    rlimit cpu{};
    ::getrlimit(RLIMIT_CPU, &cpu);
    const rlim_t want = static_cast<rlim_t>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + s + 2);
    cpu.rlim_cur = cpu.rlim_max == RLIM_INFINITY ? want : std::min(want, cpu.rlim_max);
    ::setrlimit(RLIMIT_CPU, &cpu);
}

// Signals as a fresh process has them: the program that started us may
// block or ignore the ones our limits rely on.
void defaultSignals() {
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGALRM, SIGXCPU, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM}) ::signal(sig, SIG_DFL);
    ::signal(SIGPIPE, SIG_IGN);
}

bool reply(int fd, int rc, const std::string& info, const std::string& error, const std::vector<uint8_t>* cubin) {
    ReplyHeader h{kMagic, rc, info.size(), error.size(), cubin ? cubin->size() : 0};
    return sendAll(fd, &h, sizeof h, kForever) && sendAll(fd, info.data(), info.size(), kForever) &&
           sendAll(fd, error.data(), error.size(), kForever) &&
           (!cubin || sendAll(fd, cubin->data(), cubin->size(), kForever));
}

// Splits "a\0b\0c\0" into its strings.
std::vector<std::string> strings(const std::vector<uint8_t>& p, size_t from) {
    std::vector<std::string> out;
    size_t i = from;
    while (i < p.size()) {
        const auto* s = reinterpret_cast<const char*>(p.data() + i);
        const size_t n = strnlen(s, p.size() - i);
        out.emplace_back(s, n);
        i += n + 1;
    }
    return out;
}

[[noreturn]] void worker(int fd) {
    defaultSignals();
    rlimit none{0, 0};
    ::setrlimit(RLIMIT_CORE, &none);  // a crash leaves no core file behind
    Hello hello{kMagic, static_cast<int32_t>(::getpid())};
    if (!sendAll(fd, &hello, sizeof hello, kForever)) ::_exit(0);
    std::unique_ptr<nvjitlink::Session> session;
    std::vector<std::vector<uint8_t>> inputs;  // what the session was given
    std::string library = "0";  // the server loaded the default one
    for (;;) {
        Request rq{};
        if (!recvAll(fd, &rq, sizeof rq, kForever)) ::_exit(0);  // the client is done
        if (rq.bytes > kMaxPayloadBytes) ::_exit(1);
        std::vector<uint8_t> payload(rq.bytes);
        if (!recvAll(fd, payload.data(), payload.size(), kForever)) ::_exit(0);
        limitTime(rq.seconds);
        int rc = 0;
        if (rq.op == kOpCreate && !session) {
            limitMemory(rq.memoryBytes);
            // payload: "<1 if overridden><library>\0<arg>\0<arg>\0..."
            std::vector<std::string> parts = strings(payload, 0);
            if (parts.empty()) ::_exit(1);
            // The library this session wants, when it is not the one in use
            // (a kept worker may have served a test's stand-in before).
            const std::string& lib = parts.front();
            if (lib != library) {
                nvjitlink::setLibraryPathForTesting(!lib.empty() && lib[0] == '1' ? lib.c_str() + 1 : nullptr);
                library = lib;
            }
            std::vector<std::string> args(parts.begin() + 1, parts.end());
            auto s = nvjitlink::Session::create(args);
            if (s.ok()) session = std::move(*s);
            rc = s.ok() ? 0 : s.status().code() == CUDA_ERROR_JIT_COMPILER_NOT_FOUND ? kNoLibrary : s.status().code();
            if (!reply(fd, rc, "", "", nullptr)) ::_exit(0);
        } else if (rq.op == kOpAdd && session) {
            const auto* name = reinterpret_cast<const char*>(payload.data());
            const size_t nameBytes = strnlen(name, payload.size());
            if (nameBytes == payload.size()) ::_exit(1);
            rc = session->addData(static_cast<nvjitlink::InputType>(rq.arg), payload.data() + nameBytes + 1,
                                  payload.size() - nameBytes - 1, name);
            // nvJitLink keeps the name (and maybe the data) it was given
            // until nvJitLinkComplete: they stay as long as the session.
            inputs.push_back(std::move(payload));
            if (!reply(fd, rc, session->infoLog(), session->errorLog(), nullptr)) ::_exit(0);
        } else if (rq.op == kOpReset) {
            session.reset();
            inputs.clear();
            if (!reply(fd, 0, "", "", nullptr)) ::_exit(0);
        } else if (rq.op == kOpComplete && session) {
            rc = session->complete();
            std::vector<uint8_t> cubin;
            if (rc == nvjitlink::kSuccess) {
                auto c = session->linkedCubin();
                if (c.ok()) cubin = std::move(*c);
                else rc = nvjitlink::kFinalize;
            }
            if (!reply(fd, rc, session->infoLog(), session->errorLog(), &cubin)) ::_exit(0);
        } else {
            ::_exit(1);
        }
        ::alarm(0);
    }
}

// ------------------------------------------------------------------ server (client side)

// Where the nvlite-jit program is: $NVLITE_JIT_HELPER, else next to this library.
std::string findHelper() {
    if (const char* env = std::getenv("NVLITE_JIT_HELPER"); env && *env)
        return ::access(env, X_OK) == 0 ? env : "";
    Dl_info info{};
    if (!::dladdr(reinterpret_cast<void*>(&serve), &info) || !info.dli_fname) return "";
    // The name the library was loaded by (a libcuda.so.1 link, say) and
    // the file it names: the helper is installed beside the latter.
    std::vector<std::string> names{info.dli_fname};
    if (char* real = ::realpath(info.dli_fname, nullptr)) {
        names.emplace_back(real);
        std::free(real);
    }
    for (const std::string& name : names) {
        const size_t slash = name.rfind('/');
        const std::string dir = slash == std::string::npos ? "." : name.substr(0, slash);
        for (const char* rel : {"/nvlite-jit", "/../libexec/nvlite-jit"}) {
            const std::string p = dir + rel;
            if (::access(p.c_str(), X_OK) == 0) return p;
        }
    }
    return "";
}

struct Server {
    std::mutex mutex;
    int fd = -1;        // the control socket
    pid_t pid = 0;
    pid_t owner = 0;    // the process that started it (a fork of ours starts its own)
    std::string override;
    bool useOverride = false;
};

Server& server() {
    static auto* s = new Server();  // outlives every session
    return *s;
}

void closeServer(Server& s) {
    if (s.fd >= 0 && s.owner == ::getpid()) {
        ::close(s.fd);
        if (s.pid > 0) ::waitpid(s.pid, nullptr, WNOHANG);  // reaped now if it ended
    }
    s.fd = -1;
    s.pid = 0;
}

// Starts the server; the caller holds s.mutex.
Status startServer(Server& s) {
    closeServer(s);
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return CUDA_ERROR_OPERATING_SYSTEM;
    const std::string helper = findHelper();
    pid_t pid = -1;
    if (!helper.empty()) {
        // The child's end becomes its fd 3 (dup2 clears close-on-exec; the
        // copy from F_DUPFD_CLOEXEC is never 3 itself).
        const int child = ::fcntl(sv[1], F_DUPFD_CLOEXEC, 10);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, child, 3);
        char* argv[] = {const_cast<char*>("nvlite-jit"), const_cast<char*>("--serve"), nullptr};
        const int rc = child >= 0 ? ::posix_spawn(&pid, helper.c_str(), &fa, nullptr, argv, environ) : EMFILE;
        posix_spawn_file_actions_destroy(&fa);
        if (child >= 0) ::close(child);
        if (rc != 0) pid = -1;
        if (trace::driver()) trace::print("jit: server %s (pid %d)", helper.c_str(), static_cast<int>(pid));
    }
    if (pid < 0) {
        // No helper program: a fork of this process serves (see jit_process.h).
        pid = ::fork();
        if (pid == 0) {
            ::close(sv[0]);
            if (::dup2(sv[1], 3) < 0) ::_exit(1);
            ::close_range(4, ~0u, 0);
            serve(3);
        }
        if (trace::driver()) trace::print("jit: no nvlite-jit program; server forked (pid %d)", static_cast<int>(pid));
    }
    ::close(sv[1]);
    if (pid < 0) {
        ::close(sv[0]);
        return CUDA_ERROR_OPERATING_SYSTEM;
    }
    s.fd = sv[0];
    s.pid = pid;
    s.owner = ::getpid();
    return kOk;
}

// Hands 'fd' to the server, which forks a worker for it.
Status sendToServer(int fd, bool restart) {
    Server& s = server();
    std::lock_guard lock(s.mutex);
    if (restart || s.fd < 0 || s.owner != ::getpid()) NVL_TRY(startServer(s));
    char byte = 0;
    iovec iov{&byte, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
    ssize_t r;
    do {
        r = ::sendmsg(s.fd, &msg, MSG_NOSIGNAL);
    } while (r < 0 && errno == EINTR);
    if (r != static_cast<ssize_t>(iov.iov_len)) {
        closeServer(s);
        return CUDA_ERROR_OPERATING_SYSTEM;
    }
    return kOk;
}

// The library override the workers get: "0" for none, "1<path>" for one.
std::string libraryChoice() {
    Server& s = server();
    std::lock_guard lock(s.mutex);
    return s.useOverride ? "1" + s.override : "0";
}

int pidfdOpen(pid_t pid) {
#ifdef SYS_pidfd_open
    return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
    (void)pid;
    return -1;
#endif
}

using Worker = Session::Worker;

// ------------------------------------------------------------------ workers

// Idle workers, ready for a session (their last one ended cleanly).
struct Pool {
    std::mutex mutex;
    std::vector<Worker> idle;
    pid_t owner = 0;
};

Pool& pool() {
    static auto* p = new Pool();  // outlives every session
    return *p;
}

bool takeIdle(Worker* out) {
    Pool& p = pool();
    std::lock_guard lock(p.mutex);
    if (p.owner != ::getpid()) {
        // A fork of the process that made them: they are its parent's.
        for (Worker& w : p.idle) ::close(w.fd);
        p.idle.clear();
        p.owner = ::getpid();
    }
    if (p.idle.empty()) return false;
    *out = p.idle.back();
    p.idle.pop_back();
    return true;
}

// Keeps 'w' for a later session, or ends it.
void giveBack(Worker w) {
    if (w.sessions < kMaxSessionsPerWorker) {
        Pool& p = pool();
        std::lock_guard lock(p.mutex);
        if (p.owner == ::getpid() && p.idle.size() < kMaxIdleWorkers) {
            p.idle.push_back(w);
            return;
        }
    }
    ::close(w.fd);  // the worker reads EOF and ends
}

// A new worker from the server (started, or restarted once when it died).
Result<Worker> startWorker() {
    for (int attempt = 0; attempt < 2; ++attempt) {
        int sv[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return CUDA_ERROR_OPERATING_SYSTEM;
        Status sent = sendToServer(sv[1], attempt > 0);
        ::close(sv[1]);
        Hello hello{};
        if (sent.ok() && recvAll(sv[0], &hello, sizeof hello, now() + kStartSeconds) && hello.magic == kMagic &&
            hello.pid > 0)
            return Worker{sv[0], hello.pid, 0};
        ::close(sv[0]);
    }
    return CUDA_ERROR_OPERATING_SYSTEM;
}

}  // namespace

// ------------------------------------------------------------------ Session

Result<std::unique_ptr<Session>> Session::create(const std::vector<std::string>& args, const Limits& limits) {
    if (liveSessions.fetch_add(1, std::memory_order_acq_rel) >= kMaxSessions) {
        liveSessions.fetch_sub(1, std::memory_order_acq_rel);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    std::unique_ptr<Session> s(new Session());
    s->counted_ = true;
    s->limits_ = limits;
    std::vector<uint8_t> payload;
    auto put = [&](const std::string& str) {
        payload.insert(payload.end(), str.begin(), str.end());
        payload.push_back(0);
    };
    put(libraryChoice());
    for (const std::string& a : args) put(a);
    // An idle worker first; one that fails to answer is dropped for a new one.
    for (int attempt = 0; attempt < 2; ++attempt) {
        const bool reused = takeIdle(&s->worker_);
        if (!reused) {
            NVL_ASSIGN_OR_RETURN(s->worker_, startWorker());
        }
        s->dead_ = false;
        ++s->worker_.sessions;
        Reply r = s->call(kOpCreate, static_cast<uint32_t>(args.size()), payload);
        if (r.rc == kWorkerFailed && reused) continue;
        if (r.rc == kNoLibrary) return CUDA_ERROR_JIT_COMPILER_NOT_FOUND;
        if (r.rc == kWorkerFailed) return CUDA_ERROR_OPERATING_SYSTEM;
        if (r.rc != 0) {
            s->clean_ = false;
            return static_cast<CUresult>(r.rc);
        }
        return s;
    }
    return CUDA_ERROR_OPERATING_SYSTEM;
}

Session::~Session() {
    if (!dead_ && worker_.fd >= 0) {
        // A worker whose every call went well serves again (its nvJitLink
        // handle destroyed); any other one ends.
        if (clean_ && call(kOpReset, 0, {}, kResetSeconds).rc == 0) giveBack(worker_);
        else if (!dead_) ::close(worker_.fd);
    }
    if (counted_) liveSessions.fetch_sub(1, std::memory_order_acq_rel);
}

void Session::kill() {
    if (dead_) return;
    dead_ = true;
    clean_ = false;
    // Through a pidfd where the kernel has them, so a reused pid is never hit.
    const int pidfd = pidfdOpen(worker_.pid);
    if (pidfd >= 0) {
#ifdef SYS_pidfd_send_signal
        ::syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0);
#endif
        ::close(pidfd);
    }
    // Without one the worker's own alarm ends it.
    ::close(worker_.fd);
    worker_.fd = -1;
}

Reply Session::call(uint32_t op, uint32_t arg, const std::vector<uint8_t>& payload, double seconds) {
    Reply out;
    out.rc = kWorkerFailed;
    if (dead_) return out;
    if (seconds <= 0) seconds = limits_.seconds;
    Request rq{op, arg, payload.size(), seconds, limits_.memoryBytes};
    const double deadline = now() + seconds + kTransferSlackSeconds;
    const int fd = worker_.fd;
    ReplyHeader h{};
    bool ok = sendAll(fd, &rq, sizeof rq, deadline) && sendAll(fd, payload.data(), payload.size(), deadline) &&
              recvAll(fd, &h, sizeof h, deadline) && h.magic == kMagic && h.infoBytes <= kMaxLogBytes &&
              h.errorBytes <= kMaxLogBytes && h.cubinBytes <= kMaxCubinBytes;
    if (ok) {
        out.info.resize(h.infoBytes);
        out.error.resize(h.errorBytes);
        out.cubin.resize(h.cubinBytes);
        ok = recvAll(fd, out.info.data(), out.info.size(), deadline) &&
             recvAll(fd, out.error.data(), out.error.size(), deadline) &&
             recvAll(fd, out.cubin.data(), out.cubin.size(), deadline);
    }
    if (!ok) {
        if (trace::driver()) trace::print("jit: worker %d failed (crashed, over a limit, or hung): killed", worker_.pid);
        kill();
        out = Reply{};
        out.rc = kWorkerFailed;
        return out;
    }
    out.rc = h.rc;
    if (out.rc != 0) clean_ = false;
    return out;
}

Reply Session::add(int type, const void* data, size_t size, const std::string& name) {
    std::vector<uint8_t> payload(name.size() + 1 + size);
    std::memcpy(payload.data(), name.c_str(), name.size() + 1);
    if (size) std::memcpy(payload.data() + name.size() + 1, data, size);
    return call(kOpAdd, static_cast<uint32_t>(type), payload);
}

Reply Session::complete() { return call(kOpComplete, 0, {}); }

void setLibraryPathForTesting(const char* path) {
    Server& s = server();
    std::lock_guard lock(s.mutex);
    s.useOverride = path != nullptr;
    s.override = path ? path : "";
}

void stopServerForTesting() {
    {
        Pool& p = pool();
        std::lock_guard lock(p.mutex);
        for (Worker& w : p.idle) ::close(w.fd);
        p.idle.clear();
    }
    Server& s = server();
    std::lock_guard lock(s.mutex);
    closeServer(s);
}

// ------------------------------------------------------------------ server

void serve(int controlFd) {
    defaultSignals();
    ::signal(SIGCHLD, SIG_IGN);  // workers are reaped by the kernel
    // Loaded once here, so that workers start with the library in place.
    (void)nvjitlink::preload();
    for (;;) {
        char byte;
        iovec iov{&byte, 1};
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
        msghdr msg{};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control;
        msg.msg_controllen = sizeof control;
        const ssize_t r = ::recvmsg(controlFd, &msg, MSG_CMSG_CLOEXEC);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) ::_exit(0);  // every client is gone
        cmsghdr* c = CMSG_FIRSTHDR(&msg);
        if (!c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int))) continue;
        int fd;
        std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
        const pid_t pid = ::fork();
        if (pid == 0) {
            ::close(controlFd);
            worker(fd);
        }
        ::close(fd);
    }
}

}  // namespace nvl::loader::jitproc
