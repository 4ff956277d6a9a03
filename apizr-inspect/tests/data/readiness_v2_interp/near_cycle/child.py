from near_cycle import NAME
