// Q8_0 embedding lookup (values: q8_0_items).
#include "q_get_rows_common"
#include "q8_0_items"
