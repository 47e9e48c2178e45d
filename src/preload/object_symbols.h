// The functions a loaded object itself defines, read from its dynamic symbol table and
// hash tables. Not dlsym: that finds a program's PLT entry for a function whose address
// the program takes (a non-PIE python3's malloc) as if it were a definition, and it may
// allocate, while this runs inside the process's first malloc call. Nothing here
// allocates or takes a lock.
#ifndef PADDLE_PROF_SRC_PRELOAD_OBJECT_SYMBOLS_H_
#define PADDLE_PROF_SRC_PRELOAD_OBJECT_SYMBOLS_H_

#include <link.h>

namespace paddle_prof::internal {

// The address of function `name` as `object` defines it (its default version; an IFUNC
// resolved), or null where the object does not define it.
void* DefinedFunction(const dl_phdr_info& object, const char* name);

// Whether `address` lies in one of the object's loaded segments.
bool ObjectContains(const dl_phdr_info& object, const void* address);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_PRELOAD_OBJECT_SYMBOLS_H_
