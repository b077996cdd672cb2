// Softmax + cross-entropy loss over N rows of K logits (Caffe's SoftmaxWithLoss, normalised by
// the batch):
//   p[n,k] = exp(x[n,k] - max_k x[n,:]) / sum_j exp(x[n,j] - max_k x[n,:])
//   loss   = -(1/N) sum_n log p[n, label[n]]
//   dx     = (p - onehot(label)) / N
// Descriptor: "mb16ic1000" (N = mb, K = ic). Labels are label[n] = n*7919 mod K.
// Checked against the _ref functions (softmax_test.cpp); the reference backward is checked by
// finite differences of the reference loss.
#pragma once

namespace dls {

template <class T>
double softmax_xent_fwd_ref(const T* x, const int* label, double* p, int n, int k);
template <class T>
void softmax_xent_bwd_ref(const T* x, const int* label, double* dx, int n, int k);
// Returns the loss; writes p.
float softmax_xent_fwd_cpu(const float* x, const int* label, float* p, int n, int k);
// dx from the forward's p.
void softmax_xent_bwd_cpu(const float* p, const int* label, float* dx, int n, int k);

}  // namespace dls
