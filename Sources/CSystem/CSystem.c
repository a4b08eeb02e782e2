#define _GNU_SOURCE
#include "CSystem.h"
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
