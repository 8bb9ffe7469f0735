// Q4_K dequantize (values: q4_k_items).
#include "q_dequant_common"
#include "q4_k_items"
