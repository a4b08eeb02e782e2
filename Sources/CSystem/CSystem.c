#define _GNU_SOURCE
#include "CSystem.h"
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <fnmatch.h>
#include <stdio.h>
#include <unistd.h>

_Static_assert(HF_FNM_CASEFOLD == FNM_CASEFOLD, "FNM_CASEFOLD");
_Static_assert(HF_RENAME_NOREPLACE == RENAME_NOREPLACE, "RENAME_NOREPLACE");

int hf_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags) {
    return renameat2(olddirfd, oldpath, newdirfd, newpath, flags);
}

ssize_t hf_copy_file_range(int fd_in, off_t *off_in, int fd_out, size_t len) {
    return copy_file_range(fd_in, off_in, fd_out, NULL, len, 0);
}

#include <spawn.h>
extern char **environ;

int hf_spawn(const char *path, char *const argv[], int stdin_fd, int stdout_fd, pid_t *pid) {
    posix_spawn_file_actions_t actions;
    int rc = posix_spawn_file_actions_init(&actions);
    if (rc != 0) return rc;
    if ((rc = posix_spawn_file_actions_adddup2(&actions, stdin_fd, 0)) == 0 &&
        (rc = posix_spawn_file_actions_adddup2(&actions, stdout_fd, 1)) == 0 &&
        (rc = posix_spawn_file_actions_addclosefrom_np(&actions, 3)) == 0) {
        rc = posix_spawn(pid, path, &actions, NULL, argv, environ);
    }
    posix_spawn_file_actions_destroy(&actions);
    return rc;
}

#include <fcntl.h>
int hf_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}

#include <sys/vfs.h>
long hf_filesystem_type(const char *path) {
    struct statfs fs;
    if (statfs(path, &fs) != 0) return -1;
    return (long)fs.f_type;
}

int hf_syncfs(int fd) {
    return syncfs(fd);
}

// A lease held for a moment still makes the kernel signal its holder (SIGIO,
// whose default action ends the process) if a writer opens the file in that
// moment: ignored, unless the program handles SIGIO itself.
static void ignore_sigio(void) {
    struct sigaction current;
    if (sigaction(SIGIO, NULL, &current) == 0 && current.sa_handler == SIG_DFL) {
        signal(SIGIO, SIG_IGN);
    }
}

int hf_open_for_writing(const char *path) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, ignore_sigio);
    // Only regular files: opening a device can act on it (a tape rewinds).
    struct stat st;
    if (lstat(path, &st) != 0) return -1;
    if (!S_ISREG(st.st_mode)) {
        errno = EINVAL;
        return -1;
    }
    // Non-blocking: a FIFO must not hang us, and a lease held by another
    // (a file server's oplock) makes open fail at once instead of waiting.
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
    if (fd < 0) return errno == EWOULDBLOCK ? 1 : -1;
    int result;
    if (fcntl(fd, F_SETLEASE, F_RDLCK) == 0) {
        fcntl(fd, F_SETLEASE, F_UNLCK);
        result = 0;
    } else {
        result = errno == EAGAIN ? 1 : -1;
    }
    int saved = errno;
    close(fd);
    errno = saved;
    return result;
}
