// Per-thread state of the library that stays usable for as long as the
// thread can call the driver (issue 13).
//
// A C++ thread_local object is destroyed when its thread ends, and on the
// main thread by exit() before the atexit handlers run (glibc runs the
// thread_local destructors first). Libraries above the driver call it after
// that: cudart's teardown is an atexit handler (it deletes its context-local
// storage, unloads its libraries, releases the primary context), and other
// libraries' thread_local or pthread key destructors may call in at thread
// exit. A call that found the state destroyed wrote into freed memory
// (glibc: "malloc_consolidate(): unaligned fastbin chunk detected").
//
// So the state is reached through a trivially destructible thread_local
// pointer, made on first use, and freed by a pthread key's destructor:
// those run after the thread_local destructors of an ending thread, and not
// at all for the main thread at exit() (the process is going; the state
// stays valid for the atexit handlers). A call after the key's destructor ran
// makes a new state, which glibc frees in its next round of key destructors.
#pragma once

#include <dlfcn.h>
#include <pthread.h>

namespace nvl::core {

template <class T>
class ThreadState {
public:
    static T& get() {
        if (T* t = tls_) return *t;
        return make();
    }

private:
    static T& make() {
        static const Key key;
        T* t = new T();
        tls_ = t;
        // Without a key (the process ran out of them) the state is never
        // freed: a leak per thread, not a crash.
        if (key.made) (void)pthread_setspecific(key.key, t);
        return *t;
    }

    static void destroy(void* p) {
        tls_ = nullptr;
        delete static_cast<T*>(p);
    }

    struct Key {
        pthread_key_t key{};
        bool made = false;
        Key() {
            made = pthread_key_create(&key, &destroy) == 0;
            // The key's destructor is code of this library: it must stay
            // mapped as long as threads that used it may end.
            Dl_info info;
            if (made && dladdr(reinterpret_cast<const void*>(&destroy), &info) && info.dli_fname)
                (void)dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
        }
    };

    static inline thread_local T* tls_ = nullptr;
};

}  // namespace nvl::core
