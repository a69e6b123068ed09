// libarchive 3.6 keeps this helper of its format writers in archive_write_set_format.o, next
// to the table of every writer: statically linked, the pax writer (used for OCI layers in
// tests and for the container backends' archive API) would drag in the xar writer and with
// it libxml2 and ICU. Defined here once (same behaviour), that object stays out of the link.
#include <archive.h>
#include <archive_entry.h>

#include <cerrno>

extern "C" void __archive_write_entry_filetype_unsupported(struct archive* a, struct archive_entry* e,
                                                            const char* format) {
  archive_set_error(a, EINVAL, "%s: %s format cannot archive this file type", archive_entry_pathname(e), format);
}
