// GNU and Linux calls that Swift's Glibc module does not expose.
#ifndef HOTFOLDER_CSYSTEM_H
#define HOTFOLDER_CSYSTEM_H
#include <sys/types.h>

#define HF_RENAME_NOREPLACE (1 << 0)
#define HF_FNM_CASEFOLD (1 << 4)

int hf_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags);
ssize_t hf_copy_file_range(int fd_in, off_t *off_in, int fd_out, size_t len);
#endif

// Starts `path` with `argv` (NULL-terminated) and the current environment;
// the child's stdin and stdout become stdin_fd and stdout_fd, stderr is
// inherited, and every other descriptor is closed in the child (the inotify
// descriptor and the service's files must not leak into workers).
// Returns 0 and sets *pid, or an errno value.
int hf_spawn(const char *path, char *const argv[], int stdin_fd, int stdout_fd, pid_t *pid);
int hf_pipe_cloexec(int fds[2]);
// The file system type (statfs f_type) of path, or -1 with errno set.
long hf_filesystem_type(const char *path);
int hf_syncfs(int fd);
// Whether some process has `path` open for writing: 1 yes, 0 no, -1 cannot
// tell (errno: not the file's owner without CAP_LEASE, a file system without
// leases, not a regular file). Asked with a read lease, taken and released at
// once; only local file systems answer it (NFS and SMB clients refuse a lease
// without a delegation or oplock, which says nothing about writers). Ignores
// SIGIO in the process unless it is handled.
int hf_open_for_writing(const char *path);
