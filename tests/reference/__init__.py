"""Float64 NumPy reference of WebNN operators (ops), a graph-description interpreter (graph)
and the model classification check (classify)."""
