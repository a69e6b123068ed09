/* REDTEAM row 17: open /proc/self/exe of the runtime for write (CVE-2019-5736).
 * corral-init is a clone of the supervisor (never exec'd), so /proc/1/exe would name the
 * supervisor's binary on the host. Safe outcome: /proc/1/exe cannot be opened (read or
 * write) or even read as a link (EACCES: init is not dumpable); /proc/self/exe is this
 * probe; no process visible here has an exe we can open for writing. */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>

#include "probe.h"

int main(void) {
  char link[4096];
  ssize_t n = readlink("/proc/self/exe", link, sizeof link - 1);
  link[n > 0 ? n : 0] = '\0';
  if (n > 0 && !strncmp(link, "/probes/", 8)) SAFE("row17", "/proc/self/exe", "is this probe (%s)", link);
  else UNSAFE("row17", "/proc/self/exe", "is '%s', not the probe", link);
  EXPECT_FAIL("row17", "open /proc/self/exe for write", open("/proc/self/exe", O_WRONLY), ETXTBSY, EROFS, EACCES);
  EXPECT_FAIL("row17", "open /proc/1/exe for write", open("/proc/1/exe", O_WRONLY), EACCES, EPERM, ENOENT);
  EXPECT_FAIL("row17", "open /proc/1/exe for read", open("/proc/1/exe", O_RDONLY), EACCES, EPERM, ENOENT);
  EXPECT_FAIL("row17", "open /proc/1/exe O_PATH", open("/proc/1/exe", O_PATH), EACCES, EPERM, ENOENT);
  EXPECT_FAIL("row17", "readlink /proc/1/exe", readlink("/proc/1/exe", link, sizeof link), EACCES, EPERM, ENOENT);
  EXPECT_FAIL("row17", "open /proc/1/map_files", open("/proc/1/map_files/", O_RDONLY | O_DIRECTORY), EACCES, EPERM, ENOENT);
  DIR *d = opendir("/proc");
  struct dirent *e;
  int writable = 0;
  while (d && (e = readdir(d))) {
    if (!isdigit((unsigned char)e->d_name[0])) continue;
    char path[64];
    snprintf(path, sizeof path, "/proc/%s/exe", e->d_name);
    int fd = open(path, O_WRONLY);
    if (fd >= 0) {
      writable++;
      close(fd);
    }
  }
  if (d) closedir(d);
  if (writable) UNSAFE("row17", "any /proc/*/exe writable", "%d", writable);
  else SAFE("row17", "any /proc/*/exe writable", "none");
  return probe_exit();
}
