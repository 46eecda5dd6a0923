#!/usr/bin/env bash
# An example edl job on a real Kubernetes cluster: the zoo CNN on
# Fashion-MNIST with 2 parameter servers and 4 elastic workers, half of them
# at PriorityClass "high" and half at "low" (preemptible), data and outputs
# on a PersistentVolumeClaim. Prerequisites (once per cluster/namespace):
#
#   kubectl create namespace edl
#   kubectl apply -f scripts/k8s/rbac.yaml               # service account edl-master
#   kubectl apply -f scripts/k8s/priority-classes.yaml   # high / low (cluster admin)
#   a PVC "edl-data" in namespace edl holding fashion-mnist/*.gz
#   the image pushed where the nodes can pull it (scripts/build-image.sh, then skopeo copy)
#
# Usage: scripts/k8s/example-job.sh IMAGE [extra edl flags...]
#   e.g. scripts/k8s/example-job.sh registry.example.com/edl:0.1.0 --detach
#   --yaml job.yaml writes the job's objects (Secret, ConfigMap, master Pod and
#   Service) instead of submitting them: `kubectl apply -f job.yaml` later.
set -euo pipefail
if (($# < 1)); then
  sed -n '2,18p' "$0"
  exit 2
fi
image=$1
shift
edl=${EDL:-edl}
exec "$edl" train --cluster=kube --namespace=edl --image_name="$image" \
  --job_name=fashion-mnist-cnn --model_def=zoo:fashion_mnist_cnn \
  --volume="claim_name=edl-data,mount_path=/data" \
  --training_data=/data/fashion-mnist/train-images-idx3-ubyte.gz \
  --validation_data=/data/fashion-mnist/t10k-images-idx3-ubyte.gz \
  --num_epochs=3 --num_ps_pods=2 --num_workers=4 \
  --master_pod_priority=high --ps_pod_priority=high --worker_pod_priority=0.5 \
  --master_resource_request=cpu=0.5,memory=1Gi \
  --ps_resource_request=cpu=1,memory=2Gi \
  --worker_resource_request=cpu=2,memory=4Gi --worker_resource_limit=cpu=2,memory=6Gi \
  --checkpoint_dir=/data/checkpoints/fashion-mnist-cnn --checkpoint_steps=200 \
  --output=/data/models/fashion-mnist-cnn "$@"
