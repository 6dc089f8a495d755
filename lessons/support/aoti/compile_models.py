"""AOT-compiles lesson 06's two models with torch._inductor.aoti_compile_and_package.

Usage: compile_models.py DIR. DIR holds request.json (the shapes and, for each weight, its name
and shape) and weights.bin (the weights as float32, in request order, written by the lesson, so
both sides run the same model). Writes into DIR: linear.pt2 and mlp.pt2 (the packages),
linear_code.txt and mlp_code.txt (the generated C++ wrapper and kernels, as the package holds
them) and result.json (torch version, seconds per model, the vector ISA Inductor used). Kernels are compiled with
TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE=1 (set by the caller) so each records itself to the profiler.
"""
import json
import os
import pathlib
import sys
import time
import zipfile

import torch


class Geglu(torch.nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.gate = torch.nn.Linear(dim, hidden, bias=False)
        self.up = torch.nn.Linear(dim, hidden, bias=False)
        self.down = torch.nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        return self.down(torch.nn.functional.gelu(self.gate(x), approximate="tanh") * self.up(x))


def load_weights(directory, request):
    data = bytearray((directory / "weights.bin").read_bytes())
    weights, offset = {}, 0
    for tensor in request["tensors"]:
        count = 1
        for size in tensor["shape"]:
            count *= size
        flat = torch.frombuffer(data, dtype=torch.float32, count=count, offset=offset)
        weights[tensor["name"]] = flat.reshape(tensor["shape"]).clone()
        offset += 4 * count
    if offset != len(data):
        raise SystemExit(f"compile_models: weights.bin holds {len(data)} bytes, the request {offset}")
    return weights


def generated_code(package):
    with zipfile.ZipFile(package) as archive:
        sources = [name for name in archive.namelist() if name.endswith(".cpp")]
        return "".join(f"// {name}\n" + archive.read(name).decode() for name in sorted(sources))


def compile_one(module, example, path):
    start = time.time()
    with torch.no_grad():
        exported = torch.export.export(module, (example,))
        torch._inductor.aoti_compile_and_package(exported, package_path=str(path))
    return time.time() - start


def main():
    directory = pathlib.Path(sys.argv[1])
    request = json.loads((directory / "request.json").read_text())
    weights = load_weights(directory, request)
    shapes = request["linear"], request["mlp"]
    linear = torch.nn.Linear(shapes[0]["features"], shapes[0]["features"])
    mlp = Geglu(shapes[1]["dim"], shapes[1]["hidden"])
    with torch.no_grad():
        linear.weight.copy_(weights["linear.weight"])
        linear.bias.copy_(weights["linear.bias"])
        for name in ("gate", "up", "down"):
            getattr(mlp, name).weight.copy_(weights[f"mlp.{name}.weight"])
    seconds = {
        "linear": compile_one(linear, torch.randn(shapes[0]["rows"], shapes[0]["features"]), directory / "linear.pt2"),
        "mlp": compile_one(mlp, torch.randn(shapes[1]["tokens"], shapes[1]["dim"]), directory / "mlp.pt2"),
    }
    for name in ("linear", "mlp"):
        (directory / f"{name}_code.txt").write_text(generated_code(directory / f"{name}.pt2"))
    # The vector ISA Inductor generated for: none when no ISA's test build succeeded here.
    from torch._inductor import cpu_vec_isa

    isa = cpu_vec_isa.pick_vec_isa()
    result = {"torch": torch.__version__, "seconds": seconds, "vector_isa": str(isa) if isa else ""}
    (directory / "result.json").write_text(json.dumps(result))


if __name__ == "__main__":
    main()
