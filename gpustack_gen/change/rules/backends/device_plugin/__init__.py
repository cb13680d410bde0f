"""The standalone device plugin chart's rules: its move to and from the GPU Operator."""
