from redis import Redis


class Backend:
    client_class = Redis

    def __init__(self, url):
        self.client = self.client_class.from_url(url)
        self.settings = {}
