// The preset security policies, as one table: each rule lists its severity in each preset
// (or '-' where the preset leaves it out). The presets keep the intent of llm-sandbox's
// (development, production, educational, data_science, web_scraping, minimal, strict) and
// extend each to corral's eight languages with the nearest equivalents: python's os.system
// is javascript's child_process, java's Runtime.exec, cpp's system(), go's os/exec, r's
// system(), ruby's backticks; python's ctypes is ffi-napi, sun.misc.Unsafe, dlopen, cgo,
// dyn.load, Fiddle.
#include <map>
#include <mutex>

#include "src/security/security_policy.h"

namespace corral::security {
namespace {

// Column order of the severity strings below.
enum Preset { kDevelopment, kProduction, kEducational, kDataScience, kWebScraping, kMinimal, kStrict, kPresets };

struct PresetInfo {
  const char* name;
  Severity threshold;
  const char* description;
};

constexpr PresetInfo kInfo[kPresets] = {
    {"development", Severity::kHigh,
     "Permissive: refuses only direct command execution, native-code access and destructive commands."},
    {"production", Severity::kLow,
     "For services: refuses command execution, dynamic code, file writes and deletion, raw sockets, environment "
     "access and interpreter-escape idioms."},
    {"educational", Severity::kMedium,
     "For teaching: refuses system damage (commands, deletion) and raw sockets; eval and plain sockets are "
     "reported but allowed."},
    {"data_science", Severity::kMedium,
     "For analysis: data libraries (pandas, numpy, matplotlib, tidyverse) and HTTP fetching allowed; command "
     "execution, operating-system access and deletion refused."},
    {"web_scraping", Severity::kMedium,
     "For scraping: HTTP clients allowed; command execution, operating-system access, raw sockets and deletion "
     "refused."},
    {"minimal", Severity::kHigh, "Bare minimum: refuses only destructive commands and native-code access."},
    {"strict", Severity::kLow,
     "Refuses almost everything that reaches outside the program: os/sys, subprocess, file and network access, "
     "dynamic code, threads, deserialization; no library installs."},
};

struct PatternRow {
  const char* languages;  // space-separated, "*" for all
  Scope scope;
  const char* regex;
  const char* description;
  const char* severity;  // one of "-LMHC" per preset, in Preset order
  int group = 0;
};

struct ModuleRow {
  const char* language;
  const char* names;  // space-separated
  const char* description;
  const char* severity;
};

constexpr Scope C = Scope::kCode, S = Scope::kCodeAndStrings, T = Scope::kText;

// clang-format off
const PatternRow kPatterns[] = {
  // ---- every language (these read strings too: the danger is the text itself)
  {"*", T, R"re(\brm\s+(?:-[-\w]+\s+)+(?:/\*?|~/?|\$HOME/?)(?=[\s'"`;&|)]|$))re", "Recursive deletion of the root or home directory", "HHHHHHH"},
  {"*", T, R"re(\bmkfs(?:\.\w+)?\b|\bdd\s+[^\n]*\bof=/dev/|\bformat\s+[A-Za-z]:[/\\])re", "Disk formatting or raw device writes", "HHHHHHH"},
  {"*", T, R"re(:\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:)re", "Shell fork bomb", "HHHHHHH"},
  {"*", T, R"re(/etc/(?:shadow|gshadow|sudoers|passwd)\b|/proc/(?:self|\d+)/(?:environ|mem|maps|root|cwd|fd)\b|/proc/sysrq-trigger|/(?:var/)?run/docker\.sock|\.ssh/(?:id_\w+|authorized_keys)\b|/sys/fs/cgroup\b)re", "Access to a sensitive host path", "-HMMM-H"},

  // ---- python
  {"python", C, R"re(\b(?:os|posix|nt)\s*\.\s*(?:system|popen\d?|exec[lv]p?e?|spawn[lv]p?e?|posix_spawnp?)\b)re", "Shell command or program execution (os.system, os.popen, os.exec*, os.spawn*)", "HHHHH-H"},
  {"python", C, R"re(\bsubprocess\s*\.\s*\w+\s*\()re", "Subprocess execution", "HHHHH-H"},
  {"python", S, R"re(\b(?:os\s*\.\s*(?:system|popen)|subprocess\s*\.\s*\w+)\s*\([^)]*\b(?:rm|dd|mkfs|shred|format)\b)re", "Destructive shell command", "-----H-"},
  {"python", C, R"re(\b(?:pty\s*\.\s*spawn|os\s*\.\s*(?:fork|forkpty))\s*\()re", "Process spawning (pty.spawn, os.fork)", "-HHHH-H"},
  {"python", C, R"re(\bos\s*\.\s*\w+\s*\()re", "Any os module function call", "------H"},
  {"python", C, R"re(\beval\s*\()re", "Dynamic code evaluation", "-ML----"},
  {"python", C, R"re(\bexec\s*\()re", "Dynamic code execution", "-M-----"},
  {"python", C, R"re((?:^|[^.\w])(eval|exec|compile)\b)re", "Dynamic code execution (any use of eval, exec or compile)", "------H", 1},
  {"python", S, R"re(\bopen\s*\((?:[^()]|\([^()]*\))*['"][rbt]*[wax][+bt]*['"])re", "File write", "-M-LL--"},
  {"python", C, R"re(\.\s*write_(?:text|bytes)\s*\()re", "File write (pathlib)", "-M-LL-M"},
  {"python", C, R"re(\bopen\s*\()re", "File operations", "------M"},
  {"python", C, R"re(\b(?:os\s*\.\s*(?:remove|unlink|rmdir|removedirs)|shutil\s*\.\s*rmtree)\s*\()re", "File or directory deletion", "-HHHH-H"},
  {"python", C, R"re(\.\s*(?:unlink|rmdir)\s*\(\s*\))re", "File or directory deletion (pathlib)", "-HHHH-H"},
  {"python", C, R"re(\bos\s*\.\s*(?:environ|getenv|putenv|unsetenv)\b)re", "Environment variable access", "-L----L"},
  {"python", C, R"re(\bsocket\s*\.\s*socket\s*\()re", "Raw socket creation", "-M-M---"},
  {"python cpp", C, R"re(\bSOCK_RAW\b)re", "Raw packet socket", "-MMMM-M"},
  {"python", C, R"re(\bsocket\s*\.\s*\w+\s*\()re", "Socket operations", "------M"},
  {"python", C, R"re(\b(?:pickle|cPickle|dill|joblib|marshal|shelve)\s*\.\s*loads?\s*\()re", "Deserialization (can run code)", "---L---"},
  {"python", C, R"re(\btime\s*\.\s*sleep\s*\(\s*[0-9]*\.?[0-9]+\s*\))re", "Sleep (rate-limit evasion)", "----L--"},
  {"python", C, R"re(\b__import__\s*\()re", "Dynamic import", "------M"},
  {"python", S, R"re(\b(?:__import__|import_module)\s*\(\s*(?!(?:name\s*=\s*)?[rRuU]?(?:'[\w.]*'|"[\w.]*")\s*[,)]))re", "Dynamic import of a computed module name (hides the module from the module rules)", "-HMHH-H"},
  {"python", C, R"re(\b(?:getattr|setattr|delattr)\s*\()re", "Dynamic attribute access", "------L"},
  {"python", T, R"re(\b__(?:builtins|globals|subclasses|bases|base|mro|code|closure|getattribute|loader)__\b)re", "Interpreter introspection used in sandbox escapes", "-HMHH-H"},
  {"python", C, R"re(\b(?:globals|locals|vars)\s*\(\s*\)\s*\[)re", "Namespace lookup by name (globals()[...])", "-HMHH-H"},
  {"python", C, R"re(\b(?:globals|locals|vars)\s*\()re", "Namespace introspection", "------L"},

  // ---- javascript
  {"javascript", C, R"re(\b(?:execSync|execFileSync|spawnSync|execFile)\s*\()re", "Program execution (child_process)", "HHHHH-H"},
  {"javascript", S, R"re(\b(?:exec|spawn|fork)\s*\(\s*['"`])re", "Program execution with a literal command", "HHHHH-H"},
  {"javascript", S, R"re(\b(?:exec|execSync|spawn|spawnSync)\s*\(\s*['"`][^'"`]*\b(?:rm|dd|mkfs|shred)\b)re", "Destructive shell command", "-----H-"},
  {"javascript", C, R"re(\bprocess\s*\.\s*(?:binding|_linkedBinding|dlopen)\s*\()re", "Node internal bindings or native addons", "HHMMHHH"},
  {"javascript", C, R"re(\beval\s*\()re", "Dynamic code evaluation", "-ML---H"},
  {"javascript", C, R"re(\bnew\s+Function\b|\bFunction\s*\()re", "Function constructor (dynamic code)", "-ML---H"},
  {"javascript", S, R"re(\bset(?:Timeout|Interval|Immediate)\s*\(\s*['"`])re", "Timer with a code string", "-ML---H"},
  {"javascript", S, R"re(\brequire\s*\(\s*(?!(?:'[^']*'|"[^"]*"|`[^`$]*`)\s*\)))re", "require() of a computed module name", "-HMHH-H"},
  {"javascript", S, R"re(\bimport\s*\(\s*(?!(?:'[^']*'|"[^"]*"|`[^`$]*`)\s*[,)]))re", "import() of a computed module name", "-HMHH-H"},
  {"javascript", T, R"re(\bconstructor\s*(?:\.\s*constructor\b|\[\s*['"`]constructor)|\[\s*['"`]constructor['"`]\s*\])re", "Function constructor reached through .constructor (sandbox-escape idiom)", "-HMHH-H"},
  {"javascript", C, R"re(\bprocess\s*\.\s*mainModule\b|\bmodule\s*\.\s*constructor\b|\b_load\s*\(|\bcreateRequire\s*\()re", "Module loader internals", "-HMHH-H"},
  {"javascript", C, R"re(\b(?:writeFile|writeFileSync|appendFile|appendFileSync|createWriteStream)\s*\()re", "File write", "-M-LL-M"},
  {"javascript", C, R"re(\b(?:rmSync|rmdirSync|unlinkSync)\s*\(|\bfs\s*(?:\.\s*promises\s*)?\.\s*(?:rm|rmdir|unlink)\s*\()re", "File or directory deletion", "-HHHH-H"},
  {"javascript", C, R"re(\bprocess\s*\.\s*env\b)re", "Environment variable access", "-L----L"},
  {"javascript", C, R"re(\bnet\s*\.\s*(?:connect|createConnection|createServer|Socket)\b|\bdgram\s*\.\s*createSocket\b)re", "Raw TCP/UDP sockets", "-M-MM-M"},
  {"javascript", C, R"re(\bfetch\s*\(|\bXMLHttpRequest\b|\bWebSocket\b)re", "Network requests", "------M"},
  {"javascript", C, R"re(\bfs\s*(?:\.\s*promises\s*)?\.\s*\w+\s*\()re", "File system access", "------M"},

  // ---- java
  {"java", C, R"re(\bRuntime\s*\.\s*getRuntime\s*\(\s*\)\s*\.\s*exec\s*\(|\bProcessBuilder\b|\.\s*exec\s*\()re", "Program execution (Runtime.exec, ProcessBuilder)", "HHHHH-H"},
  {"java", S, R"re((?:\.\s*exec|\bProcessBuilder)\s*\([^;]*"(?:rm|dd|mkfs|shred)\b)re", "Destructive shell command", "-----H-"},
  {"java", C, R"re(\bClass\s*\.\s*forName\s*\(|\.\s*(?:getDeclaredMethods?|getMethods?|getDeclaredFields?|getDeclaredConstructors?|setAccessible|invoke)\s*\(|\bMethodHandles\b)re", "Reflection (reaches any class or method by name)", "-HMHH-H"},
  {"java", C, R"re(\bScriptEngineManager\b)re", "Script engine (dynamic code)", "-ML---H"},
  {"java", C, R"re(\bSystem\s*\.\s*(?:loadLibrary|load)\s*\(|\bUnsafe\b)re", "Native code loading or sun.misc.Unsafe", "HHMMHHH"},
  {"java", C, R"re(\bnew\s+(?:FileOutputStream|FileWriter|RandomAccessFile)\b|\bFiles\s*\.\s*(?:write|writeString|newBufferedWriter|newOutputStream|createFile|copy|move)\s*\()re", "File write", "-M-LL-M"},
  {"java", C, R"re(\bFiles\s*\.\s*(?:delete|deleteIfExists)\s*\(|\.\s*delete(?:OnExit)?\s*\(\s*\))re", "File deletion", "-HHHH-H"},
  {"java", C, R"re(\bSystem\s*\.\s*getenv\s*\()re", "Environment variable access", "-L----L"},
  {"java", C, R"re(\bnew\s+(?:Socket|ServerSocket|DatagramSocket|MulticastSocket)\s*\(|\b(?:SocketChannel|DatagramChannel|ServerSocketChannel)\s*\.\s*open\s*\()re", "Raw sockets", "-M-MM-M"},
  {"java", C, R"re(\bnew\s+(?:File|FileInputStream|FileReader)\s*\(|\bFiles\s*\.\s*\w+\s*\(|\bPaths?\s*\.\s*(?:get|of)\s*\()re", "File system access", "------M"},
  {"java", C, R"re(\bRuntime\s*\.\s*getRuntime\b|\bnew\s+Thread\b|\bExecutors\s*\.)re", "Runtime handle or threads", "------L"},

  // ---- cpp
  {"cpp", C, R"re(\b(?:system|popen|execl|execlp|execle|execv|execve|execvp|execvpe|fexecve|posix_spawnp?)\s*\()re", "Program execution", "HHHHH-H"},
  {"cpp", S, R"re(\b(?:system|popen)\s*\(\s*"[^"]*\b(?:rm|dd|mkfs|shred)\b)re", "Destructive shell command", "-----H-"},
  {"cpp", C, R"re(\b(?:fork|vfork|clone|clone3)\s*\()re", "Process creation", "-HHHH-H"},
  {"cpp", C, R"re(\b(?:asm|__asm__|__asm)\b|\bsyscall\s*\()re", "Inline assembly or raw system calls", "HHMMHHH"},
  {"cpp", C, R"re(\b(?:dlopen|dlmopen|dlsym|dlvsym)\s*\()re", "Dynamic loading of native code", "HHMMHHH"},
  {"cpp", C, R"re(\b(?:ptrace|mprotect|process_vm_writev|process_vm_readv)\s*\()re", "Process memory manipulation", "-HMHH-H"},
  {"cpp", S, R"re(\bofstream\b|\bfopen\s*\([^;]*,\s*"[^"]*[wa+]|\b(?:open|openat|creat)\s*\([^;]*\bO_(?:WRONLY|RDWR|CREAT|TRUNC|APPEND)\b)re", "File write", "-M-LL-M"},
  {"cpp", S, R"re(\b(?:unlink|unlinkat|rmdir|remove_all)\s*\(|\bfilesystem\s*::\s*remove\s*\(|(?:^|[^\w.>])remove\s*\(\s*")re", "File or directory deletion", "-HHHH-H"},
  {"cpp", C, R"re(\b(?:getenv|secure_getenv|setenv|putenv|unsetenv|clearenv)\s*\(|\benviron\b)re", "Environment variable access", "-L----L"},
  {"cpp", C, R"re(\bsocket\s*\(\s*(?:AF_|PF_))re", "Socket creation", "-M-MM-M"},
  {"cpp", C, R"re(\b(?:fopen|freopen|open|openat|creat)\s*\(|\b[io]?fstream\b)re", "File system access", "------M"},

  // ---- go
  {"go", C, R"re(\bexec\s*\.\s*Command(?:Context)?\s*\(|\bsyscall\s*\.\s*(?:Exec|ForkExec|StartProcess)\s*\(|\bos\s*\.\s*StartProcess\s*\()re", "Program execution", "HHHHH-H"},
  {"go", S, R"re(\bexec\s*\.\s*Command(?:Context)?\s*\([^)]*\b(?:rm|dd|mkfs|shred)\b)re", "Destructive command", "-----H-"},
  {"go", C, R"re(\b(?:syscall|unix)\s*\.\s*(?:Syscall6?|RawSyscall6?|Syscall9)\s*\()re", "Raw system calls", "HHMMHHH"},
  {"go", C, R"re(\bos\s*\.\s*(?:Create|WriteFile|OpenFile|Truncate|Symlink|Link|Rename)\s*\()re", "File write", "-M-LL-M"},
  {"go", C, R"re(\bos\s*\.\s*(?:Remove|RemoveAll)\s*\()re", "File or directory deletion", "-HHHH-H"},
  {"go", C, R"re(\bos\s*\.\s*(?:Getenv|LookupEnv|Environ|Setenv|Unsetenv|Clearenv|ExpandEnv)\s*\()re", "Environment variable access", "-L----L"},
  {"go", C, R"re(\bnet\s*\.\s*(?:Dial\w*|Listen\w*)\s*\()re", "Raw network connections", "-M-MM-M"},
  {"go", C, R"re(\bos\s*\.\s*(?:Open|ReadFile|ReadDir|Chmod|Chown|Mkdir\w*)\s*\()re", "File system access", "------M"},

  // ---- r
  {"r", C, R"re(\b(?:system|system2|shell|shell\.exec|pipe)\s*\()re", "Shell command execution", "HHHHH-H"},
  {"r", S, R"re(\bsystem2?\s*\([^)]*\b(?:rm|dd|mkfs|shred)\b)re", "Destructive shell command", "-----H-"},
  {"r", C, R"re(\beval(?:q|Parent)?\s*\(|\bparse\s*\([^)]*\btext\s*=|\bstr2(?:lang|expression)\s*\()re", "Dynamic code evaluation", "-ML---H"},
  {"r", S, R"re(\b(?:get|get0|mget|match\.fun|getFromNamespace|getExportedValue)\s*\(\s*['"](?:system2?|shell|pipe|eval|dyn\.load)['"])re", "Dangerous function looked up by name", "-HMHH-H"},
  {"r", C, R"re(\b(?:get|get0|mget|match\.fun|do\.call|getFromNamespace|getExportedValue)\s*\()re", "Function looked up by name", "------M"},
  {"r", C, R"re(\bcharacter\.only\s*=\s*(?:TRUE|T)\b)re", "library() of a computed package name", "-HMHH-H"},
  {"r", C, R"re(\bdyn\.load\s*\(|(?:^|[^\w.])\.(?:C|Call|External2?|Fortran)\s*\()re", "Native code loading", "HHMMHHH"},
  {"r", C, R"re(\b(?:writeLines|writeBin|writeChar|saveRDS|save|sink|file\.create|file\.copy|file\.rename|write\.csv|write\.table)\s*\()re", "File write", "-M-LL-M"},
  {"r", C, R"re(\b(?:unlink|file\.remove)\s*\()re", "File deletion", "-HHHH-H"},
  {"r", C, R"re(\bSys\s*\.\s*(?:getenv|setenv|unsetenv)\s*\()re", "Environment variable access", "-L----L"},
  {"r", C, R"re(\b(?:socketConnection|make\.socket|socketAccept|serverSocket)\s*\()re", "Raw sockets", "-MLMM-M"},
  {"r", C, R"re(\b(?:url|download\.file|curlGetHeaders)\s*\()re", "Network requests", "------M"},
  {"r", C, R"re(\b(?:file|readLines|readBin|list\.files|dir)\s*\()re", "File system access", "------M"},

  // ---- ruby
  {"ruby", C, R"re(\b(?:Kernel\s*\.\s*)?(?:system|exec|spawn|syscall)\s*\(|\b(?:system|exec|spawn)\s+['"%]|\bIO\s*\.\s*popen\b|\bOpen3\s*\.|\b(?:Process|PTY)\s*\.\s*spawn\b|%x[^\w\s]|`[^`]*`)re", "Shell command or program execution (system, exec, backticks, %x, IO.popen, Open3)", "HHHHH-H"},
  {"ruby", S, R"re((?:\b(?:system|exec|spawn)|`|%x.)\s*\(?\s*['"]?[^'"\n]*\b(?:rm|dd|mkfs|shred)\b)re", "Destructive shell command", "-----H-"},
  {"ruby", C, R"re(\bfork\b)re", "Process creation", "-HHHH-H"},
  {"ruby", C, R"re(\b(?:eval|instance_eval|class_eval|module_eval|instance_exec|class_exec)\b)re", "Dynamic code evaluation", "-ML---H"},
  {"ruby", S, R"re(\b(?:send|__send__|public_send)\s*\(?\s*(?::|['"])(?:system|exec|spawn|eval|`))re", "Dangerous method called by name", "-HMHH-H"},
  {"ruby", C, R"re(\b(?:send|__send__|public_send|const_get|instance_variable_get|instance_variable_set|method|define_method)\b)re", "Dynamic dispatch", "------M"},
  {"ruby", C, R"re(\bFiddle\b|\bFFI\s*::)re", "Native code (Fiddle, FFI)", "HHMMHHH"},
  {"ruby", S, R"re(\bFile\s*\.\s*(?:write|binwrite)\b|\bFile\s*\.\s*open\s*\([^)]*['"][wa]|\bIO\s*\.\s*write\b|\bFileUtils\s*\.\s*(?:cp|mv|touch|mkdir_p|ln_s)\b)re", "File write", "-M-LL-M"},
  {"ruby", C, R"re(\bFile\s*\.\s*(?:delete|unlink)\b|\bFileUtils\s*\.\s*(?:rm|rm_r|rm_rf|rm_f|remove|remove_dir|remove_entry|rmtree|remove_entry_secure)\b|\bDir\s*\.\s*(?:delete|rmdir|unlink)\b)re", "File or directory deletion", "-HHHH-H"},
  {"ruby", C, R"re(\bENV\b)re", "Environment variable access", "-L----L"},
  {"ruby", C, R"re(\b(?:TCPSocket|UDPSocket|UNIXSocket|TCPServer|UNIXServer|Socket)\s*\.\s*(?:new|open|tcp|udp)\b)re", "Raw sockets", "-MLMM-M"},
  {"ruby", C, R"re(\b(?:File|IO|Dir|FileUtils)\s*\.\s*\w+|\bopen\s*\()re", "File system access", "------M"},

  // ---- bash (strings are code in a shell: every scope sees them)
  {"bash", T, R"re(/dev/(?:tcp|udp)/)re", "Network connection through /dev/tcp", "-HMMM-H"},
  {"bash", C, R"re(\|\s*(?:sudo\s+)?(?:\S*/)?(?:ba|da|z|k|c|tc|fi)?sh\b)re", "Piping data into a shell", "-HHHH-H"},
  {"bash", C, R"re((?:^|[\s;&|(])(?:eval|source)\s|\b(?:ba|da|z|k)?sh\s+-c\b)re", "Dynamic shell code (eval, source, sh -c)", "-ML---H"},
  {"bash", C, R"re(\bbase64\s+(?:-\w*d|--decode)\b)re", "Decoding a hidden payload", "-MLMM-H"},
  {"bash", C, R"re(\bchmod\s+(?:-\w+\s+)*(?:[ugoa]*[+=][rwxXt]*s|[0-7]?[2-7][0-7]{3}\b))re", "setuid or setgid bit", "-HHHH-H"},
  {"bash", C, R"re(\bprintenv\b)re", "Environment dump", "-L----L"},
};

const ModuleRow kModules[] = {
  {"python", "os posix nt", "Operating system interface", "-HHHH-H"},
  {"python", "subprocess _posixsubprocess pty", "Subprocess management", "HHHHH-H"},
  {"python", "ctypes _ctypes cffi", "Foreign function interface (arbitrary native calls)", "HHMMHHH"},
  {"python", "socket", "Network sockets", "-ML-M-M"},
  {"python", "urllib requests", "HTTP client", "---LL-M"},
  {"python", "http urllib3 httpx aiohttp ftplib smtplib telnetlib paramiko", "Network protocols", "------M"},
  {"python", "multiprocessing", "Process-based parallelism", "-M----M"},
  {"python", "threading", "Thread-based parallelism", "------L"},
  {"python", "pickle marshal shelve dill", "Object deserialization (can run code)", "------L"},
  {"python", "sys", "Interpreter internals", "------H"},
  {"python", "importlib builtins", "Dynamic imports and builtins", "------H"},
  {"python", "code codeop runpy", "Running code from strings or other modules", "-HMHH-H"},
  {"python", "shutil", "High-level file operations", "------M"},

  {"javascript", "child_process", "Program execution", "HHHHH-H"},
  {"javascript", "vm inspector module", "Running code in new contexts / module loader internals", "-HMHH-H"},
  {"javascript", "worker_threads cluster", "Parallel processes and threads", "-M----M"},
  {"javascript", "net dgram tls", "Raw network sockets", "-ML-M-M"},
  {"javascript", "http https http2 undici axios node-fetch ws", "HTTP client", "---LL-M"},
  {"javascript", "fs os", "File system and operating system interface", "------M"},
  {"javascript", "ffi-napi ffi node-ffi", "Foreign function interface", "HHMMHHH"},

  {"java", "java.lang.reflect java.lang.invoke", "Reflection", "-HMHH-H"},
  {"java", "javax.script", "Script engines (dynamic code)", "-ML---H"},
  {"java", "java.net", "Networking", "-MLLL-M"},
  {"java", "java.nio.channels javax.net", "Socket channels", "-ML-M-M"},
  {"java", "sun.misc jdk.internal", "JVM internals (Unsafe)", "HHMMHHH"},
  {"java", "java.io java.nio.file", "File system access", "------M"},

  {"cpp", "sys/socket.h netinet/in.h arpa/inet.h netdb.h sys/un.h", "Network sockets", "-ML-M-M"},
  {"cpp", "curl/curl.h", "HTTP client (libcurl)", "---LL-M"},
  {"cpp", "dlfcn.h", "Dynamic loading of native code", "HHMMHHH"},
  {"cpp", "sys/ptrace.h sys/syscall.h", "Raw system calls and process tracing", "-HMHH-H"},
  {"cpp", "spawn.h", "Program execution", "-HHHH-H"},
  {"cpp", "unistd.h", "POSIX operating system interface", "------H"},
  {"cpp", "sys/mman.h", "Memory mapping", "------M"},
  {"cpp", "thread pthread.h", "Threads", "------L"},
  {"cpp", "fstream filesystem", "File streams", "------M"},

  {"go", "os/exec", "Program execution", "HHHHH-H"},
  {"go", "syscall golang.org/x/sys unsafe C plugin", "Raw system calls, unsafe memory, cgo, plugins", "HHMMHHH"},
  {"go", "os", "Operating system interface", "-HHHH-H"},
  {"go", "net/http", "HTTP client", "---LL-M"},
  {"go", "net", "Networking", "------M"},
  {"go", "reflect", "Reflection", "------M"},

  {"r", "processx sys callr", "Program execution", "HHHHH-H"},
  {"r", "Rcpp inline", "Compiling and loading native code", "HHMMHHH"},
  {"r", "reticulate", "Running Python from R", "-HMHH-H"},
  {"r", "httr httr2 curl RCurl crul", "HTTP client", "---LL-M"},
  {"r", "parallel future", "Parallel processes", "-M----M"},

  {"ruby", "open3 pty", "Program execution", "HHHHH-H"},
  {"ruby", "fiddle ffi", "Foreign function interface", "HHMMHHH"},
  {"ruby", "socket", "Network sockets", "-ML-M-M"},
  {"ruby", "net/http net/https net/ftp net/smtp open-uri httparty faraday rest-client", "Network clients", "---LL-M"},
  {"ruby", "fileutils", "File operations", "------M"},

  {"bash", "curl wget", "HTTP download tools", "---LL-M"},
  {"bash", "nc ncat netcat socat telnet", "Raw network connections", "-ML-M-M"},
  {"bash", "ssh scp sftp rsync ftp", "Remote shells and file transfer", "-MLMM-M"},
  {"bash", "sudo su doas pkexec nsenter unshare chroot mount umount insmod modprobe rmmod setcap capsh", "Privilege and namespace tools", "-HHHH-H"},
  {"bash", "crontab systemctl service at", "Persistence and service control", "-HMHH-H"},
  {"bash", "apt apt-get yum dnf apk pip pip3 npm gem", "Package installation", "-MLLL-M"},
  {"bash", "python python3 perl ruby node php lua", "Other interpreters (escape the shell rules)", "------H"},
};
// clang-format on

bool sev_of(const char* s, int preset, Severity* out) {
  switch (s[preset]) {
    case 'L': *out = Severity::kLow; return true;
    case 'M': *out = Severity::kMedium; return true;
    case 'H': *out = Severity::kHigh; return true;
    case 'C': *out = Severity::kCritical; return true;
    default: return false;
  }
}

std::vector<std::string> words(const char* s) {
  std::vector<std::string> out;
  std::string w;
  for (const char* p = s;; ++p) {
    if (*p == ' ' || *p == '\0') {
      if (!w.empty()) out.push_back(w);
      w.clear();
      if (*p == '\0') break;
    } else {
      w += *p;
    }
  }
  return out;
}

StatusOr<SecurityPolicy> build(int preset) {
  SecurityPolicy p;
  p.name = kInfo[preset].name;
  p.description = kInfo[preset].description;
  p.severity_threshold = kInfo[preset].threshold;
  for (const PatternRow& r : kPatterns) {
    SecurityPattern sp;
    if (!sev_of(r.severity, preset, &sp.severity)) continue;
    sp.pattern = r.regex;
    sp.description = r.description;
    sp.scope = r.scope;
    sp.report_group = r.group;
    if (std::string(r.languages) != "*") sp.languages = words(r.languages);
    p.patterns.push_back(std::move(sp));
  }
  for (const ModuleRow& r : kModules) {
    Severity sev;
    if (!sev_of(r.severity, preset, &sev)) continue;
    for (const auto& name : words(r.names)) p.restricted_modules[r.language].push_back({name, r.description, sev});
  }
  if (preset == kStrict) p.libraries.blocked = {"*"};
  RETURN_IF_ERROR(p.compile());
  return p;
}

}  // namespace

const std::vector<std::string>& SecurityPolicy::preset_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const PresetInfo& i : kInfo) v.push_back(i.name);
    return v;
  }();
  return names;
}

StatusOr<SecurityPolicy> SecurityPolicy::preset(const std::string& name) {
  static std::mutex mu;
  static std::map<std::string, SecurityPolicy> cache;  // compiled once: copies share the regexes
  for (int i = 0; i < kPresets; ++i) {
    if (name != kInfo[i].name) continue;
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(name);
    if (it == cache.end()) {
      ASSIGN_OR_RETURN(SecurityPolicy p, build(i));
      it = cache.emplace(name, std::move(p)).first;
    }
    return it->second;
  }
  std::string all;
  for (const PresetInfo& i : kInfo) all += (all.empty() ? "" : ", ") + std::string(i.name);
  return Status(ErrorCode::kNotFound, "unknown security preset '" + name + "' (one of: " + all + ")", "security_policy");
}

}  // namespace corral::security
