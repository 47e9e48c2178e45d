// The report's sort keys, every fact of each in one table (sort_keys.cc): its name (the
// flags, the bindings, the summary), the words the table's header says, and the value a
// row is sorted by, largest first. A new key is an enumerator in paddle_prof/report.h
// and one line of that table.
#ifndef PADDLE_PROF_SRC_SORT_KEYS_H_
#define PADDLE_PROF_SRC_SORT_KEYS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "paddle_prof/report.h"

namespace paddle_prof::internal {

// Every key's name, in the table's order: what the Python package offers as SORTED_KEYS
// and its CLI as choices.
std::vector<std::string> SortingKeyNames();
// The key of one of SortingKeyNames(); std::invalid_argument naming them otherwise
// (ParseSortingKey also takes "" and "default", as the flag does).
EventSortingKey SortingKeyNamed(const std::string& name);
// "number of calls", "peak memory", ...: the table's "Sorted by ..." header.
std::string SortDescription(EventSortingKey key);
// What a row is sorted by under `key`: looked up once per sort, called per comparison.
using SortValue = double (*)(const EventRow& row);
SortValue SortValueOf(EventSortingKey key);
// A row's `field` summed over the places it touched.
int64_t SumOverPlaces(const EventRow& row, int64_t MemoryStats::*field);

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_SORT_KEYS_H_
