/* REDTEAM row 26: bpf(), perf_event_open, userfaultfd, io_uring_setup.
 * Safe outcome: EPERM for each (large kernel attack surface, denied by seccomp). */
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>

#include "probe.h"

int main(void) {
  union bpf_attr map = {0};
  map.map_type = BPF_MAP_TYPE_ARRAY;
  map.key_size = 4;
  map.value_size = 4;
  map.max_entries = 1;
  EXPECT_FAIL("row26", "bpf(BPF_MAP_CREATE)", syscall(SYS_bpf, BPF_MAP_CREATE, &map, sizeof map), EPERM);
  struct bpf_insn insns[2] = {{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0},
                              {.code = BPF_JMP | BPF_EXIT}};
  union bpf_attr prog = {0};
  prog.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
  prog.insns = (unsigned long)insns;
  prog.insn_cnt = 2;
  prog.license = (unsigned long)"GPL";
  EXPECT_FAIL("row26", "bpf(BPF_PROG_LOAD)", syscall(SYS_bpf, BPF_PROG_LOAD, &prog, sizeof prog), EPERM);
  struct perf_event_attr pe = {0};
  pe.type = PERF_TYPE_SOFTWARE;
  pe.size = sizeof pe;
  pe.config = PERF_COUNT_SW_CPU_CLOCK;
  pe.disabled = 1;
  pe.exclude_kernel = 1;
  EXPECT_FAIL("row26", "perf_event_open(self)", syscall(SYS_perf_event_open, &pe, 0, -1, -1, 0), EPERM);
  EXPECT_FAIL("row26", "perf_event_open(all on cpu 0)", syscall(SYS_perf_event_open, &pe, -1, 0, -1, 0), EPERM);
  EXPECT_FAIL("row26", "userfaultfd", syscall(SYS_userfaultfd, O_CLOEXEC), EPERM);
  EXPECT_FAIL("row26", "open /dev/userfaultfd", open("/dev/userfaultfd", O_RDWR), ENOENT);
  struct io_uring_params p = {0};
  EXPECT_FAIL("row26", "io_uring_setup", syscall(SYS_io_uring_setup, 8, &p), EPERM);
  EXPECT_FAIL("row26", "io_uring_enter", syscall(SYS_io_uring_enter, 0, 1, 0, 0, NULL, 0), EPERM);
  EXPECT_FAIL("row26", "io_uring_register", syscall(SYS_io_uring_register, 0, 0, NULL, 0), EPERM);
  return probe_exit();
}
