"""Media: decode, sample and resize videos and images the way Qwen-VL models expect.

Modules (import the one you need; importing this package imports nothing heavy):

* :mod:`videorl_kit.media.geometry` - pure-Python frame-count, index, resize and token
  arithmetic, equal to qwen-vl-utils 0.0.14.
* :mod:`videorl_kit.media.decode` - ``probe_video``, ``decode_video``, ``decode_image``.
* :mod:`videorl_kit.media.decoders` - the video decoders, one module each, found by name
  (PyAV by default, decord and torchcodec optional).
* :mod:`videorl_kit.media.decoded` - ``DecodedVideo`` and ``DecodedImage``.
* :mod:`videorl_kit.media.errors` - the ``MediaError`` hierarchy.
* :mod:`videorl_kit.media.processor_inputs` - HF ``VideoMetadata``-compatible dicts.
"""
