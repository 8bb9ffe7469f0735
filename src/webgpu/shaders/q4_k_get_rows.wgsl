// Q4_K embedding lookup (values: q4_k_items).
#include "q_get_rows_common"
#include "q4_k_items"
