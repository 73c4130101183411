"""tf.contrib's `framework.python.ops.audio_ops` (`from tensorflow.contrib.framework.python.ops
import audio_ops as contrib_audio`, TensorFlow's speech-commands tutorial): TensorFlow's
audio kernels under the names and arguments contrib gave them. TensorFlow 2 keeps
`decode_wav` and `encode_wav` as `tf.audio`'s, and the spectrogram and MFCC kernels only
as raw ops, which take keywords alone.
"""

import tensorflow as tf

decode_wav = tf.audio.decode_wav
encode_wav = tf.audio.encode_wav


def audio_spectrogram(input, window_size, stride, magnitude_squared=False, name=None):  # noqa: A002
    """contrib's `audio_spectrogram`: the `AudioSpectrogram` kernel."""
    return tf.raw_ops.AudioSpectrogram(
        input=input,
        window_size=window_size,
        stride=stride,
        magnitude_squared=magnitude_squared,
        name=name,
    )


def mfcc(
    spectrogram,
    sample_rate,
    upper_frequency_limit=4000,
    lower_frequency_limit=20,
    filterbank_channel_count=40,
    dct_coefficient_count=13,
    name=None,
):
    """contrib's `mfcc`: the `Mfcc` kernel."""
    return tf.raw_ops.Mfcc(
        spectrogram=spectrogram,
        sample_rate=sample_rate,
        upper_frequency_limit=upper_frequency_limit,
        lower_frequency_limit=lower_frequency_limit,
        filterbank_channel_count=filterbank_channel_count,
        dct_coefficient_count=dct_coefficient_count,
        name=name,
    )
