#!/usr/bin/env bash
# The paper-scale records in results/runs made on one GPU (NVIDIA H200, 16 CPU cores; Python 3.12,
# torch 2.11.0+cu130, torch-geometric 2.8.0.post1) under protocol=published: Table 3's 30-layer
# column with the supplementary's search (§7.2) over dropout {0, 0.5} x lr {0.1, 0.01, 0.005, 0.001}
# for GAT, GAT-res, GAT-Lip and GAT-Lip-res on Cora, 5 seeds trained together per setting
# (seeds_per_job=5), 1000 epochs with the preset's early stop (200 epochs without a better
# validation accuracy). Seeds already on record (scripts/reproduce_cpu.sh) are skipped.
# The records were made with one process per setting, 14 at a time on the one GPU (the joblib
# launcher below does the same); a re-launch skips finished runs and fills the settings whose
# seeds are not all on record yet.
#   bash scripts/reproduce_gpu.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
python -m lipnorm_exp train.progress=false scale=paper +experiment=residual grid.paper.datasets=cora \
    grid.paper.depths=30 "grid.paper.seeds='0,1,2,3,4'" seeds_per_job=5 \
    model.dropout=0.0,0.5 train.lr=0.1,0.01,0.005,0.001 \
    hydra/launcher=joblib hydra.launcher.n_jobs="${JOBS:-14}"

python -m lipnorm_exp.report --runs results/runs --out results
