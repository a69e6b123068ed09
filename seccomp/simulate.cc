#include "seccomp/simulate.h"

#include <cstring>

namespace corral::seccomp {

StatusOr<uint32_t> simulate(const std::vector<sock_filter>& filter, const seccomp_data& data) {
  if (filter.empty() || filter.size() > BPF_MAXINSNS) {
    return InvalidArgument("filter", "has " + std::to_string(filter.size()) + " instructions");
  }
  const auto* mem = reinterpret_cast<const uint8_t*>(&data);
  uint32_t a = 0, x = 0, scratch[BPF_MEMWORDS] = {};
  auto bad = [](size_t pc, const char* what) {
    return InvalidArgument("filter[" + std::to_string(pc) + "]", what);
  };
  for (size_t pc = 0; pc < filter.size(); ++pc) {
    const sock_filter& in = filter[pc];
    switch (BPF_CLASS(in.code)) {
      case BPF_LD:
        if (BPF_MODE(in.code) == BPF_ABS && BPF_SIZE(in.code) == BPF_W) {
          if (in.k % 4 != 0 || in.k + 4 > sizeof(data)) return bad(pc, "load outside seccomp_data");
          std::memcpy(&a, mem + in.k, 4);
        } else if (BPF_MODE(in.code) == BPF_IMM) {
          a = in.k;
        } else if (BPF_MODE(in.code) == BPF_MEM) {
          if (in.k >= BPF_MEMWORDS) return bad(pc, "scratch index out of range");
          a = scratch[in.k];
        } else if (BPF_MODE(in.code) == BPF_LEN) {
          a = sizeof(data);
        } else {
          return bad(pc, "unsupported load");
        }
        break;
      case BPF_LDX:
        if (BPF_MODE(in.code) == BPF_IMM) {
          x = in.k;
        } else if (BPF_MODE(in.code) == BPF_MEM) {
          if (in.k >= BPF_MEMWORDS) return bad(pc, "scratch index out of range");
          x = scratch[in.k];
        } else if (BPF_MODE(in.code) == BPF_LEN) {
          x = sizeof(data);
        } else {
          return bad(pc, "unsupported load");
        }
        break;
      case BPF_ST:
      case BPF_STX:
        if (in.k >= BPF_MEMWORDS) return bad(pc, "scratch index out of range");
        scratch[in.k] = BPF_CLASS(in.code) == BPF_ST ? a : x;
        break;
      case BPF_ALU: {
        const uint32_t v = BPF_SRC(in.code) == BPF_X ? x : in.k;
        switch (BPF_OP(in.code)) {
          case BPF_ADD: a += v; break;
          case BPF_SUB: a -= v; break;
          case BPF_MUL: a *= v; break;
          case BPF_DIV:
            if (v == 0) return uint32_t{0};  // the kernel ends the program with 0 (kill)
            a /= v;
            break;
          case BPF_MOD:
            if (v == 0) return uint32_t{0};
            a %= v;
            break;
          case BPF_AND: a &= v; break;
          case BPF_OR: a |= v; break;
          case BPF_XOR: a ^= v; break;
          case BPF_LSH: a = v >= 32 ? 0 : a << v; break;
          case BPF_RSH: a = v >= 32 ? 0 : a >> v; break;
          case BPF_NEG: a = -a; break;
          default: return bad(pc, "unsupported ALU operation");
        }
        break;
      }
      case BPF_JMP: {
        size_t target;
        if (BPF_OP(in.code) == BPF_JA) {
          target = pc + 1 + in.k;
        } else {
          const uint32_t v = BPF_SRC(in.code) == BPF_X ? x : in.k;
          bool taken;
          switch (BPF_OP(in.code)) {
            case BPF_JEQ: taken = a == v; break;
            case BPF_JGT: taken = a > v; break;
            case BPF_JGE: taken = a >= v; break;
            case BPF_JSET: taken = (a & v) != 0; break;
            default: return bad(pc, "unsupported jump");
          }
          target = pc + 1 + (taken ? in.jt : in.jf);
        }
        if (target >= filter.size()) return bad(pc, "jump past the end");
        pc = target - 1;
        break;
      }
      case BPF_RET:
        if (BPF_RVAL(in.code) == BPF_A) return a;
        if (BPF_RVAL(in.code) == BPF_K) return in.k;
        return bad(pc, "unsupported return");
      case BPF_MISC:
        if (BPF_MISCOP(in.code) == BPF_TAX) {
          x = a;
        } else {
          a = x;
        }
        break;
      default: return bad(pc, "unsupported instruction class");
    }
  }
  return InvalidArgument("filter", "runs past its last instruction");
}

std::string describe_return(uint32_t ret) {
  const uint32_t data = ret & SECCOMP_RET_DATA;
  switch (ret & SECCOMP_RET_ACTION_FULL) {
    case SECCOMP_RET_KILL_PROCESS: return "kill_process";
    case SECCOMP_RET_KILL_THREAD: return "kill_thread";
    case SECCOMP_RET_TRAP: return "trap";
    case SECCOMP_RET_ERRNO: return "errno:" + std::to_string(data);
    case SECCOMP_RET_USER_NOTIF: return "notify";
    case SECCOMP_RET_TRACE: return "trace:" + std::to_string(data);
    case SECCOMP_RET_LOG: return "log";
    case SECCOMP_RET_ALLOW: return "allow";
  }
  return "unknown:" + std::to_string(ret);
}

}  // namespace corral::seccomp
