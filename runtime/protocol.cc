#include "runtime/protocol.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace corral::runtime {

static int write_full(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return 0;
}

int send_frame(int fd, Frame type, const void* payload, uint32_t length, const int* fds, int nfds) {
  FrameHeader h{static_cast<uint32_t>(type), length};
  struct iovec iov = {&h, sizeof h};
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
  struct msghdr msg = {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (nfds > 0) {
    if (nfds > kMaxFds) return -EINVAL;
    std::memset(control, 0, sizeof control);
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
    struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
    std::memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
  }
  ssize_t w;
  do {
    w = sendmsg(fd, &msg, MSG_NOSIGNAL);
  } while (w < 0 && errno == EINTR);
  if (w < 0) return -errno;
  // The header is 8 bytes; a stream socket may still take fewer.
  if (static_cast<size_t>(w) < sizeof h) {
    int r = write_full(fd, reinterpret_cast<const char*>(&h) + w, sizeof h - w);
    if (r) return r;
  }
  return length ? write_full(fd, static_cast<const char*>(payload), length) : 0;
}

int read_full(int fd, void* buf, size_t length) {
  char* p = static_cast<char*>(buf);
  while (length > 0) {
    ssize_t r = read(fd, p, length);
    if (r < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (r == 0) return -EPIPE;
    p += r;
    length -= static_cast<size_t>(r);
  }
  return 0;
}

int recv_header(int fd, FrameHeader* header, int* fds, int* nfds) {
  *nfds = 0;
  struct iovec iov = {header, sizeof *header};
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
  struct msghdr msg = {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t r;
  do {
    r = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
  } while (r < 0 && errno == EINTR);
  if (r < 0) return -errno;
  if (r == 0) return -EPIPE;
  for (struct cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      int n = static_cast<int>((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
      int* in = reinterpret_cast<int*>(CMSG_DATA(c));
      for (int i = 0; i < n; ++i) {
        if (*nfds < kMaxFds) fds[(*nfds)++] = in[i];
        else close(in[i]);
      }
    }
  }
  if (static_cast<size_t>(r) < sizeof *header) {
    int rr = read_full(fd, reinterpret_cast<char*>(header) + r, sizeof *header - r);
    if (rr) return rr;
  }
  if (header->length > kMaxFrame) return -EMSGSIZE;
  return 0;
}

void make_error(ErrorPayload* out, const char* step, int err, const char* detail) {
  std::memset(out, 0, sizeof *out);
  out->err = err;
  if (step) std::strncpy(out->step, step, sizeof out->step - 1);
  if (detail) std::strncpy(out->detail, detail, sizeof out->detail - 1);
}

}  // namespace corral::runtime
