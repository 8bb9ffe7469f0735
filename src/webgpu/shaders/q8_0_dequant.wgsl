// Q8_0 dequantize (values: q8_0_items).
#include "q_dequant_common"
#include "q8_0_items"
