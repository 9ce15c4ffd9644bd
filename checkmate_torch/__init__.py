"""checkmate_torch: export a PyTorch model's joint forward and backward graph
as a checkmate-graph v1 file, and replay a checkmate plan on it with real
tensors. Run as `/usr/bin/python3 -m checkmate_torch --help`; docs/torch.md
describes the choices."""
