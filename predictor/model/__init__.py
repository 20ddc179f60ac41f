"""What a kernel's time will be: device profiles, the roofline, features, the learned network,
the estimate with its calibration, and the CPU (PoCL) cost model."""
