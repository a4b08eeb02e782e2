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
